// A pull reader of JSON text held in one buffer, for documents that another node wrote: it decodes
// only the values its caller asks for, checks the syntax of the rest while it skips it without building
// anything, and refuses nesting past a limit. fleet reads its reports with it (report_reader.hpp), and
// fabric-matrix the records another process wrote, a record at a time (matrix/strict_fields.hpp).
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace cumemctl {

// The text is not JSON: at byte `offset` of the text the cursor was given.
class JsonSyntaxError : public std::runtime_error {
public:
    JsonSyntaxError(std::size_t offset, const std::string& what) : std::runtime_error(what), offset(offset) {}
    std::size_t offset;
};

// The text ended inside a value: more of the input may complete it.
class JsonIncomplete : public std::runtime_error {
public:
    JsonIncomplete() : std::runtime_error("the text ends inside a JSON value") {}
};

// A value of another type than the reader asked for.
class JsonTypeError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A digit of a JSON number.
inline bool is_json_digit(char c) {
    return c >= '0' && c <= '9';
}

// JSON's whitespace.
inline bool is_json_space(char c) {
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// What makes a text not JSON: JsonSyntaxError's words (json_fault_words).
enum class JsonFault {
    unexpected_character,
    unknown_word,
    number_without_digits,
    key_not_text,
    colon_missing,
    comma_missing,
    nested_too_deep,
    unknown_escape,
    bad_unicode_escape,
    no_open_container,
    control_character,
};
const char* json_fault_words(JsonFault fault);

// How the JSON value at the start of a text reads as JsonCursor::skip() reads it (the same grammar,
// json_scanner.hpp), found by value, with no exception: a reader tries a document with it first, so that
// a line that is not JSON (a million of them) costs a scan of its first bytes, not an exception each.
struct JsonScan {
    enum class Result { value, incomplete, syntax };
    Result result = Result::incomplete;
    std::size_t offset = 0;  // value: where it ends; syntax: the byte where skip() stops (JsonSyntaxError's)
    JsonFault fault = JsonFault::unexpected_character;  // syntax: what is wrong there
};

// Scans the value at the start of `text` (whitespace first), nested no deeper than `max_depth`.
JsonScan scan_json_value(std::string_view text, int max_depth);

class JsonCursor {
public:
    // The deepest nesting any cursor takes, whatever its limit.
    static constexpr int kMaxDepth = 128;

    enum class Type { object, array, string, number, boolean, null };

    // Reads `text` from its start; values nested deeper than `max_depth` are a syntax error.
    JsonCursor(std::string_view text, int max_depth);

    // The type of the value that comes next (after whitespace).
    Type peek();
    // Objects: begin_object(), then while (next_key(key)) { read or skip the member's value }.
    void begin_object();
    bool next_key(std::string& key);
    // Arrays: begin_array(), then while (next_item()) { read or skip the item }.
    void begin_array();
    bool next_item();
    // The next value, which must be of the type named (JsonTypeError otherwise).
    std::string read_string();
    long long read_integer();  // a number without fraction or exponent that fits
    double read_number();      // any number that a double holds (not one out of its range)
    bool read_bool();
    void read_null();
    // The next value's JSON text as written (for a value to hand to another reader).
    std::string_view raw_value();
    // Skips the next value, whatever its type, checking its syntax.
    void skip();

    // Bytes of the text read so far.
    std::size_t offset() const { return static_cast<std::size_t>(pos_ - begin_); }
    // The text read since offset `start`.
    std::string_view read_since(std::size_t start) const { return {begin_ + start, offset() - start}; }

private:
    [[noreturn]] void syntax(JsonFault fault) const;
    // The next non-whitespace character, not consumed.
    char next_char() {
        while (pos_ != end_ && is_json_space(*pos_)) ++pos_;
        if (pos_ == end_) throw JsonIncomplete();
        return *pos_;
    }
    void push();
    // One step of the grammar (json_scanner.hpp) from here: past what it reads, or its fault thrown.
    template <class Step>
    void scan(Step step);
    bool container_next(char close);
    void decode_string(std::string& out);

    const char* begin_;
    const char* pos_;
    const char* end_;
    int max_depth_;
    std::vector<bool> first_;  // per open container: whether its first member is still to come
};

}  // namespace cumemctl
