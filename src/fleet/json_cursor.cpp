#include "fleet/json_cursor.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <string>
#include <cstring>

#include <fmt/format.h>

namespace cumemctl::fleet {
namespace {

void append_utf8(std::string& out, char32_t code) {
    if (code < 0x80) {
        out += static_cast<char>(code);
    } else if (code < 0x800) {
        out += static_cast<char>(0xC0 | (code >> 6));
        out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
        out += static_cast<char>(0xE0 | (code >> 12));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (code >> 18));
        out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
    }
}

}  // namespace

JsonCursor::JsonCursor(std::string_view text, int max_depth)
    : begin_(text.data()), pos_(text.data()), end_(text.data() + text.size()), max_depth_(max_depth) {}

void JsonCursor::syntax(const char* what) const {
    throw JsonSyntaxError(offset(), what);
}

void JsonCursor::expect(char c) {
    if (next_char() != c) syntax(c == ':' ? "a ':' is missing after a key" : "an unexpected character");
    ++pos_;
}

void JsonCursor::push() {
    if (static_cast<int>(first_.size()) >= max_depth_) syntax("values nested too deep");
    first_.push_back(true);
}

JsonCursor::Type JsonCursor::peek() {
    const char c = next_char();
    switch (c) {
        case '{':
            return Type::object;
        case '[':
            return Type::array;
        case '"':
            return Type::string;
        case 't':
        case 'f':
            return Type::boolean;
        case 'n':
            return Type::null;
        default:
            if (c == '-' || is_json_digit(c)) return Type::number;
    }
    syntax("an unexpected character");
}

void JsonCursor::begin_object() {
    if (peek() != Type::object) throw JsonTypeError("not an object");
    push();
    ++pos_;
}

void JsonCursor::begin_array() {
    if (peek() != Type::array) throw JsonTypeError("not a list");
    push();
    ++pos_;
}

// Whether another member of the open container comes (consuming its ','), or it closes with `close`.
bool JsonCursor::container_next(char close) {
    if (first_.empty()) syntax("no open object or list");
    const char c = next_char();
    if (c == close) {
        ++pos_;
        first_.pop_back();
        return false;
    }
    if (!first_.back()) {
        if (c != ',') syntax("a ',' is missing between members");
        ++pos_;
    }
    first_.back() = false;
    return true;
}

bool JsonCursor::next_key(std::string& key) {
    if (!container_next('}')) return false;
    if (next_char() != '"') syntax("a key is not text");
    decode_string(key);
    expect(':');
    return true;
}

bool JsonCursor::next_item() {
    if (!container_next(']')) return false;
    next_char();
    return true;
}

void JsonCursor::decode_string(std::string& out) {
    ++pos_;  // the opening quote
    out.clear();
    while (true) {
        const char* stop = pos_;
        while (stop != end_ && *stop != '"' && *stop != '\\') ++stop;
        if (stop == end_) throw JsonIncomplete();
        out.append(pos_, stop);
        pos_ = stop + 1;
        if (*stop == '"') return;
        if (pos_ == end_) throw JsonIncomplete();
        const char e = *pos_++;
        switch (e) {
            case '"':
            case '\\':
            case '/':
                out += e;
                break;
            case 'b':
                out += '\b';
                break;
            case 'f':
                out += '\f';
                break;
            case 'n':
                out += '\n';
                break;
            case 'r':
                out += '\r';
                break;
            case 't':
                out += '\t';
                break;
            case 'u': {
                auto hex4 = [&]() -> char32_t {
                    if (end_ - pos_ < 4) throw JsonIncomplete();
                    unsigned value = 0;
                    const auto [p, ec] = std::from_chars(pos_, pos_ + 4, value, 16);
                    if (ec != std::errc() || p != pos_ + 4) syntax("a \\u escape without four hex digits");
                    pos_ += 4;
                    return value;
                };
                char32_t code = hex4();
                if (code >= 0xD800 && code <= 0xDBFF && end_ - pos_ >= 2 && pos_[0] == '\\' && pos_[1] == 'u') {
                    pos_ += 2;
                    const char32_t low = hex4();
                    code = low >= 0xDC00 && low <= 0xDFFF ? 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00) : 0xFFFD;
                } else if (code >= 0xD800 && code <= 0xDFFF) {
                    code = 0xFFFD;  // half of a pair alone
                }
                append_utf8(out, code);
                break;
            }
            default:
                syntax("an unknown escape in text");
        }
    }
}

std::string JsonCursor::read_string() {
    if (peek() != Type::string) throw JsonTypeError("not text");
    std::string out;
    decode_string(out);
    return out;
}

long long JsonCursor::read_integer() {
    if (peek() != Type::number) throw JsonTypeError("not a number");
    const char* start = pos_;
    skip_number();
    long long value = 0;
    const auto [p, ec] = std::from_chars(start, pos_, value);
    if (ec != std::errc() || p != pos_) throw JsonTypeError("not a whole number in range");
    return value;
}

double JsonCursor::read_number() {
    if (peek() != Type::number) throw JsonTypeError("not a number");
    const char* start = pos_;
    skip_number();
    // strtod, not from_chars: the libstdc++ of the oldest system cumemctl is built for (Debian 11's
    // GCC 10) has no from_chars for double. The text is JSON's number grammar, checked by skip_number,
    // and the process keeps the C locale, whose decimal point JSON's is.
    const std::string text(start, pos_);
    char* end = nullptr;
    errno = 0;
    const double value = std::strtod(text.c_str(), &end);
    if (errno == ERANGE || end != text.c_str() + text.size()) throw JsonTypeError("not a number a double holds");
    return value;
}

bool JsonCursor::read_bool() {
    if (peek() != Type::boolean) throw JsonTypeError("not true or false");
    const bool value = *pos_ == 't';
    skip_literal(value ? "true" : "false");
    return value;
}

void JsonCursor::read_null() {
    if (peek() != Type::null) throw JsonTypeError("not null");
    skip_literal("null");
}

std::string_view JsonCursor::raw_value() {
    next_char();
    const char* start = pos_;
    skip();
    return {start, static_cast<std::size_t>(pos_ - start)};
}

void JsonCursor::skip_literal(std::string_view word) {
    for (const char w : word) {
        if (pos_ == end_) throw JsonIncomplete();
        if (*pos_ != w) syntax("an unknown word");
        ++pos_;
    }
}

void JsonCursor::skip_string() {
    const char* from = pos_ + 1;
    while (true) {
        const auto* quote = static_cast<const char*>(std::memchr(from, '"', static_cast<std::size_t>(end_ - from)));
        if (quote == nullptr) throw JsonIncomplete();
        std::size_t backslashes = 0;
        for (const char* b = quote; b != pos_ + 1 && b[-1] == '\\'; --b) ++backslashes;
        from = quote + 1;
        if (backslashes % 2 == 0) break;
    }
    pos_ = from;
}

void JsonCursor::skip_number() {
    auto digits = [&] {
        const char* start = pos_;
        while (pos_ != end_ && is_json_digit(*pos_)) ++pos_;
        if (pos_ == end_) throw JsonIncomplete();
        if (pos_ == start) syntax("a number without digits");
    };
    if (*pos_ == '-') ++pos_;
    if (pos_ == end_) throw JsonIncomplete();
    if (*pos_ == '0') {
        ++pos_;
    } else {
        digits();
    }
    if (pos_ == end_) throw JsonIncomplete();
    if (*pos_ == '.') {
        ++pos_;
        digits();
    }
    if (*pos_ == 'e' || *pos_ == 'E') {
        ++pos_;
        if (pos_ != end_ && (*pos_ == '+' || *pos_ == '-')) ++pos_;
        digits();
    }
}

void JsonCursor::skip_scalar(char first) {
    if (first == '"') {
        skip_string();
    } else if (first == '-' || is_json_digit(first)) {
        skip_number();
    } else if (first == 't' || first == 'f' || first == 'n') {
        skip_literal(first == 't' ? "true" : first == 'f' ? "false" : "null");
    } else {
        syntax("an unexpected character");
    }
}

// One loop over the container's bytes, with the open brackets on a small stack: skipping is most of
// what a report's reading does, and a call per token would be most of its time.
void JsonCursor::skip_container() {
    enum class Expect { first_key, key, colon, first_value, value, after_value };
    const int room = std::min(max_depth_ - static_cast<int>(first_.size()), kMaxDepth);
    std::array<char, kMaxDepth> closer{};
    int depth = 0;
    auto open = [&](char c) {
        if (depth >= room) syntax("values nested too deep");
        closer[static_cast<std::size_t>(depth++)] = c == '{' ? '}' : ']';
        ++pos_;
        return c == '{' ? Expect::first_key : Expect::first_value;
    };
    auto innermost = [&] { return closer[static_cast<std::size_t>(depth - 1)]; };
    Expect expect = open(*pos_);
    while (true) {
        while (pos_ != end_ && is_json_space(*pos_)) ++pos_;
        if (pos_ == end_) throw JsonIncomplete();
        const char c = *pos_;
        switch (expect) {
            case Expect::first_key:
            case Expect::first_value:
                if (c == innermost()) {
                    expect = Expect::after_value;
                    continue;  // after_value closes it
                }
                expect = expect == Expect::first_key ? Expect::key : Expect::value;
                continue;
            case Expect::key:
                if (c != '"') syntax("a key is not text");
                skip_string();
                expect = Expect::colon;
                break;
            case Expect::colon:
                if (c != ':') syntax("a ':' is missing after a key");
                ++pos_;
                expect = Expect::value;
                break;
            case Expect::value:
                if (c == '{' || c == '[') {
                    expect = open(c);
                    continue;
                }
                skip_scalar(c);
                expect = Expect::after_value;
                break;
            case Expect::after_value:
                if (c == ',') {
                    ++pos_;
                    expect = innermost() == '}' ? Expect::key : Expect::value;
                } else if (c == innermost()) {
                    ++pos_;
                    if (--depth == 0) return;
                } else {
                    syntax("a ',' is missing between members");
                }
                break;
        }
    }
}

void JsonCursor::skip() {
    switch (peek()) {
        case Type::object:
        case Type::array:
            skip_container();
            return;
        case Type::string:
            skip_string();
            return;
        case Type::number:
            skip_number();
            return;
        case Type::boolean:
            skip_literal(*pos_ == 't' ? "true" : "false");
            return;
        case Type::null:
            skip_literal("null");
            return;
    }
}

}  // namespace cumemctl::fleet
