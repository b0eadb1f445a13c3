// JSON's grammar as the pull reader (json_cursor.hpp) checks it, written once: scan_json_value walks a
// document with it, and JsonCursor skips values and reads numbers and words with it (json_cursor.cpp), so
// that both find the same end, the same byte at fault and the same fault, under the same nesting limit.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string_view>

#include "util/json_cursor.hpp"

namespace cumemctl {

// Each step reads one production where the scanner stands and returns true, or false at the first fault,
// which scan() then gives; a scanner is used for one step (the fault ends it).
class JsonScanner {
public:
    // At `pos` of the text [begin, end) (offsets count from `begin`), with `max_depth` more levels of
    // nesting allowed (never more than JsonCursor::kMaxDepth). The steps a value takes at every byte are
    // here, inline; the rest is in json_scan.cpp.
    JsonScanner(const char* begin, const char* pos, const char* end, int max_depth)
        : begin_(begin), pos_(pos), end_(end), room_(std::min(max_depth, JsonCursor::kMaxDepth)) {}

    // Any value, whitespace first.
    bool value() {
        if (!space()) return false;
        return *pos_ == '{' || *pos_ == '[' ? container() : scalar(*pos_);
    }
    bool string();                        // at its opening quote, not decoded
    bool number();                        // at its first character, '-' or a digit
    bool literal(std::string_view word);  // true, false or null, at its first letter

    const char* pos() const { return pos_; }
    // The step's outcome: value and the offset where it ended, or the fault and where it is.
    JsonScan scan() const { return failed_ ? fault_ : JsonScan{JsonScan::Result::value, offset()}; }

private:
    std::size_t offset() const { return static_cast<std::size_t>(pos_ - begin_); }
    bool incomplete();
    bool syntax(JsonFault fault);
    bool space() {
        while (pos_ != end_ && is_json_space(*pos_)) ++pos_;
        return pos_ != end_ || incomplete();
    }
    bool scalar(char c);
    bool container();  // at its opening bracket

    const char* begin_;
    const char* pos_;
    const char* end_;
    int room_;
    bool failed_ = false;
    JsonScan fault_;
};

}  // namespace cumemctl
