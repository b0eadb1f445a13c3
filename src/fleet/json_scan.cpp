// scan_json_value (json_cursor.hpp): JsonCursor::skip()'s reading of one value, its faults returned by
// value, so that a reader can try a document that may not be JSON without an exception.
#include <algorithm>
#include <array>
#include <cstring>

#include "fleet/json_cursor.hpp"

namespace cumemctl::fleet {
namespace {

// JsonCursor::skip() by value: each step returns false at the first fault, which `scan` then holds.
class Scanner {
public:
    Scanner(std::string_view text, int max_depth)
        : begin_(text.data()),
          pos_(text.data()),
          end_(text.data() + text.size()),
          room_(std::min(max_depth, JsonCursor::kMaxDepth)) {}

    JsonScan run() {
        if (value()) scan_ = {JsonScan::Result::value, offset()};
        return scan_;
    }

private:
    std::size_t offset() const { return static_cast<std::size_t>(pos_ - begin_); }
    bool incomplete() {
        scan_ = {JsonScan::Result::incomplete, offset()};
        return false;
    }
    bool syntax() {
        scan_ = {JsonScan::Result::syntax, offset()};
        return false;
    }
    bool space() {
        while (pos_ != end_ && is_json_space(*pos_)) ++pos_;
        return pos_ != end_ || incomplete();
    }
    bool literal(std::string_view word) {
        for (const char w : word) {
            if (pos_ == end_) return incomplete();
            if (*pos_ != w) return syntax();
            ++pos_;
        }
        return true;
    }
    bool string() {
        const char* from = pos_ + 1;
        while (true) {
            const auto* quote = static_cast<const char*>(std::memchr(from, '"', static_cast<std::size_t>(end_ - from)));
            if (quote == nullptr) return incomplete();
            std::size_t backslashes = 0;
            for (const char* b = quote; b != pos_ + 1 && b[-1] == '\\'; --b) ++backslashes;
            from = quote + 1;
            if (backslashes % 2 == 0) break;
        }
        pos_ = from;
        return true;
    }
    bool digits() {
        const char* start = pos_;
        while (pos_ != end_ && is_json_digit(*pos_)) ++pos_;
        if (pos_ == end_) return incomplete();
        return pos_ != start || syntax();
    }
    bool number() {
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
    bool scalar(char c) {
        if (c == '"') return string();
        if (c == '-' || is_json_digit(c)) return number();
        if (c == 't') return literal("true");
        if (c == 'f') return literal("false");
        if (c == 'n') return literal("null");
        return syntax();
    }
    // skip_container's states and faults, one loop.
    bool value() {
        enum class Expect { key, colon, value, after_value };
        std::array<char, JsonCursor::kMaxDepth> closer{};
        int depth = 0;
        Expect expect = Expect::value;
        while (true) {
            if (!space()) return false;
            const char c = *pos_;
            if (expect == Expect::key) {
                if (c != '"') return syntax();
                if (!string()) return false;
                expect = Expect::colon;
            } else if (expect == Expect::colon) {
                if (c != ':') return syntax();
                ++pos_;
                expect = Expect::value;
            } else if (expect == Expect::value && (c == '{' || c == '[')) {
                if (depth >= room_) return syntax();
                closer[static_cast<std::size_t>(depth++)] = c == '{' ? '}' : ']';
                ++pos_;
                if (!space()) return false;
                if (*pos_ == closer[static_cast<std::size_t>(depth - 1)]) {
                    expect = Expect::after_value;
                } else {
                    expect = c == '{' ? Expect::key : Expect::value;
                }
            } else if (expect == Expect::value) {
                if (!scalar(c)) return false;
                if (depth == 0) return true;
                expect = Expect::after_value;
            } else if (c == ',') {
                ++pos_;
                expect = closer[static_cast<std::size_t>(depth - 1)] == '}' ? Expect::key : Expect::value;
            } else if (c == closer[static_cast<std::size_t>(depth - 1)]) {
                ++pos_;
                if (--depth == 0) return true;
            } else {
                return syntax();
            }
        }
    }

    const char* begin_;
    const char* pos_;
    const char* end_;
    int room_;
    JsonScan scan_;
};

}  // namespace

JsonScan scan_json_value(std::string_view text, int max_depth) {
    return Scanner(text, max_depth).run();
}

}  // namespace cumemctl::fleet
