#include "util/json_cursor.hpp"

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <string>

#include "util/json_scanner.hpp"

namespace cumemctl {
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

void JsonCursor::syntax(JsonFault fault) const {
    throw JsonSyntaxError(offset(), json_fault_words(fault));
}

template <class Step>
void JsonCursor::scan(Step step) {
    JsonScanner scanner(begin_, pos_, end_, max_depth_ - static_cast<int>(first_.size()));
    if (!step(scanner)) {
        const JsonScan fault = scanner.scan();
        if (fault.result == JsonScan::Result::incomplete) throw JsonIncomplete();
        throw JsonSyntaxError(fault.offset, json_fault_words(fault.fault));
    }
    pos_ = scanner.pos();
}

void JsonCursor::push() {
    if (static_cast<int>(first_.size()) >= max_depth_) syntax(JsonFault::nested_too_deep);
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
    syntax(JsonFault::unexpected_character);
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
    if (first_.empty()) syntax(JsonFault::no_open_container);
    const char c = next_char();
    if (c == close) {
        ++pos_;
        first_.pop_back();
        return false;
    }
    if (!first_.back()) {
        if (c != ',') syntax(JsonFault::comma_missing);
        ++pos_;
    }
    first_.back() = false;
    return true;
}

bool JsonCursor::next_key(std::string& key) {
    if (!container_next('}')) return false;
    if (next_char() != '"') syntax(JsonFault::key_not_text);
    decode_string(key);
    if (next_char() != ':') syntax(JsonFault::colon_missing);
    ++pos_;
    return true;
}

bool JsonCursor::next_item() {
    if (!container_next(']')) return false;
    next_char();
    return true;
}

void JsonCursor::decode_string(std::string& out) {
    // The grammar's check first (json_scanner.hpp), so that a fault is found, and placed, as a skip finds it.
    const char* start = pos_;
    scan([](JsonScanner& s) { return s.string(); });
    pos_ = start + 1;  // after the opening quote
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
                    if (ec != std::errc() || p != pos_ + 4) syntax(JsonFault::bad_unicode_escape);
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
                syntax(JsonFault::unknown_escape);
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
    scan([](JsonScanner& s) { return s.number(); });
    long long value = 0;
    const auto [p, ec] = std::from_chars(start, pos_, value);
    if (ec != std::errc() || p != pos_) throw JsonTypeError("not a whole number in range");
    return value;
}

double JsonCursor::read_number() {
    if (peek() != Type::number) throw JsonTypeError("not a number");
    const char* start = pos_;
    scan([](JsonScanner& s) { return s.number(); });
    // strtod, not from_chars: the libstdc++ of the oldest system cumemctl is built for (Debian 11's
    // GCC 10) has no from_chars for double. The text is JSON's number grammar, checked by the scanner,
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
    scan([value](JsonScanner& s) { return s.literal(value ? "true" : "false"); });
    return value;
}

void JsonCursor::read_null() {
    if (peek() != Type::null) throw JsonTypeError("not null");
    scan([](JsonScanner& s) { return s.literal("null"); });
}

std::string_view JsonCursor::raw_value() {
    next_char();
    const char* start = pos_;
    skip();
    return {start, static_cast<std::size_t>(pos_ - start)};
}

void JsonCursor::skip() {
    scan([](JsonScanner& s) { return s.value(); });
}

}  // namespace cumemctl
