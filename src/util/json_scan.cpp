// JsonScanner (json_scanner.hpp): JSON's grammar, its nesting limit and its faults' words, once; and
// scan_json_value (json_cursor.hpp) on it.
#include <array>
#include <cctype>
#include <cstring>

#include "base/enum_words.hpp"
#include "util/json_cursor.hpp"
#include "util/json_scanner.hpp"

namespace cumemctl {

constexpr auto kFaultWords = enum_words<JsonFault>(
    {
        {JsonFault::unexpected_character, "an unexpected character"},
        {JsonFault::unknown_word, "an unknown word"},
        {JsonFault::number_without_digits, "a number without digits"},
        {JsonFault::key_not_text, "a key is not text"},
        {JsonFault::colon_missing, "a ':' is missing after a key"},
        {JsonFault::comma_missing, "a ',' is missing between members"},
        {JsonFault::nested_too_deep, "values nested too deep"},
        {JsonFault::unknown_escape, "an unknown escape in text"},
        {JsonFault::bad_unicode_escape, "a \\u escape without four hex digits"},
        {JsonFault::no_open_container, "no open object or list"},
        {JsonFault::control_character, "a control character in text"},
    },
    "not JSON");

const char* json_fault_words(JsonFault fault) {
    return kFaultWords.word(fault).data();
}

bool JsonScanner::incomplete() {
    failed_ = true;
    fault_ = {JsonScan::Result::incomplete, offset()};
    return false;
}

bool JsonScanner::syntax(JsonFault fault) {
    failed_ = true;
    fault_ = {JsonScan::Result::syntax, offset(), fault};
    return false;
}

bool JsonScanner::literal(std::string_view word) {
    for (const char w : word) {
        if (pos_ == end_) return incomplete();
        if (*pos_ != w) return syntax(JsonFault::unknown_word);
        ++pos_;
    }
    return true;
}

// To the closing quote, each escape and each byte checked as the decoder will (JsonCursor::decode_string):
// a control character (a file's hole of zeros, a raw newline) is not text, so that a document with one
// is not JSON here, where it is scanned, rather than deep in its decoding.
bool JsonScanner::string() {
    const char* p = pos_ + 1;
    while (true) {
        while (p != end_ && *p != '"' && *p != '\\' && static_cast<unsigned char>(*p) >= 0x20) ++p;
        if (p == end_) return incomplete();
        if (*p == '"') break;
        pos_ = p;
        if (*p != '\\') return syntax(JsonFault::control_character);
        if (end_ - p < 2) return incomplete();
        if (p[1] == 'u') {
            for (int i = 2; i < 6; ++i) {
                if (p + i == end_) return incomplete();
                if (std::isxdigit(static_cast<unsigned char>(p[i])) == 0) return syntax(JsonFault::bad_unicode_escape);
            }
            p += 6;
        } else if (p[1] != '\0' && std::strchr("\"\\/bfnrt", p[1]) != nullptr) {
            p += 2;
        } else {
            return syntax(JsonFault::unknown_escape);
        }
    }
    pos_ = p + 1;
    return true;
}

bool JsonScanner::number() {
    // One or more digits, and then a character: a number's end is known only at what follows it.
    auto digits = [this] {
        const char* start = pos_;
        while (pos_ != end_ && is_json_digit(*pos_)) ++pos_;
        if (pos_ == end_) return incomplete();
        return pos_ != start || syntax(JsonFault::number_without_digits);
    };
    if (*pos_ == '-') ++pos_;
    if (pos_ == end_) return incomplete();
    if (*pos_ == '0') {
        ++pos_;
    } else if (!digits()) {
        return false;
    }
    if (pos_ == end_) return incomplete();
    if (*pos_ == '.') {
        ++pos_;
        if (!digits()) return false;
    }
    if (*pos_ == 'e' || *pos_ == 'E') {
        ++pos_;
        if (pos_ != end_ && (*pos_ == '+' || *pos_ == '-')) ++pos_;
        return digits();
    }
    return true;
}

bool JsonScanner::scalar(char c) {
    if (c == '"') return string();
    if (c == '-' || is_json_digit(c)) return number();
    if (c == 't') return literal("true");
    if (c == 'f') return literal("false");
    if (c == 'n') return literal("null");
    return syntax(JsonFault::unexpected_character);
}

// One loop over the container's bytes, with the open brackets on a small stack: skipping is most of
// what a report's reading does, and a call per token would be most of its time.
bool JsonScanner::container() {
    enum class Expect { first_key, key, colon, first_value, value, after_value };
    std::array<char, JsonCursor::kMaxDepth> closer;  // written before each read: no need to clear it
    int depth = 0;
    auto open = [&](char c) {
        closer[static_cast<std::size_t>(depth++)] = c == '{' ? '}' : ']';
        ++pos_;
        return c == '{' ? Expect::first_key : Expect::first_value;
    };
    auto innermost = [&] { return closer[static_cast<std::size_t>(depth - 1)]; };
    if (room_ <= 0) return syntax(JsonFault::nested_too_deep);
    Expect expect = open(*pos_);
    while (true) {
        while (pos_ != end_ && is_json_space(*pos_)) ++pos_;
        if (pos_ == end_) return incomplete();
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
                if (c != '"') return syntax(JsonFault::key_not_text);
                if (!string()) return false;
                expect = Expect::colon;
                break;
            case Expect::colon:
                if (c != ':') return syntax(JsonFault::colon_missing);
                ++pos_;
                expect = Expect::value;
                break;
            case Expect::value:
                if (c == '{' || c == '[') {
                    if (depth >= room_) return syntax(JsonFault::nested_too_deep);
                    expect = open(c);
                    continue;
                }
                if (!scalar(c)) return false;
                expect = Expect::after_value;
                break;
            case Expect::after_value:
                if (c == ',') {
                    ++pos_;
                    expect = innermost() == '}' ? Expect::key : Expect::value;
                } else if (c == innermost()) {
                    ++pos_;
                    if (--depth == 0) return true;
                } else {
                    return syntax(JsonFault::comma_missing);
                }
                break;
        }
    }
}

JsonScan scan_json_value(std::string_view text, int max_depth) {
    JsonScanner scanner(text.data(), text.data(), text.data() + text.size(), max_depth);
    scanner.value();
    return scanner.scan();
}

}  // namespace cumemctl
