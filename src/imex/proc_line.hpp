// What the /proc parsers share: walking text line by line and naming the line they cannot read.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace cumemctl::imex {

// One line of a text file: its 1-based number and its text without the newline.
struct ProcLine {
    std::size_t number = 0;
    std::string_view text;
};

// Calls `visit(ProcLine)` for every line of `text`; a last line without a newline counts, an empty
// text has no lines.
template <typename Visit>
void for_each_line(std::string_view text, Visit&& visit) {
    std::size_t number = 0;
    while (!text.empty()) {
        const std::size_t end = text.find('\n');
        const std::string_view line = text.substr(0, end);
        visit(ProcLine{++number, line});
        if (end == std::string_view::npos) break;
        text.remove_prefix(end + 1);
    }
}

// The line as a message can quote it: control and non-ASCII bytes escaped (\x07), at most 80
// characters.
std::string quote_line(std::string_view line);

// The Error (unavailable, exit 3) for a line that cannot be read: "SOURCE:N: WHY: 'LINE'", with the
// remedy as the parser wrote it (naming the file's setting through setting_name).
[[noreturn]] void throw_unreadable_line(std::string_view source, const ProcLine& line, std::string_view why,
                                        std::string_view remedy);

// The remedy for a file that is not in its format: "point NAME at FILE, or at a file in its format:
// FORMAT", NAME being what the caller calls the file's property.
std::string format_remedy(const std::string& name, std::string_view file, std::string_view format);

// Whether `c` is a blank (space or tab).
constexpr bool is_blank(char c) {
    return c == ' ' || c == '\t';
}

// `text` without leading and trailing blanks.
std::string_view trim_blanks(std::string_view text);

}  // namespace cumemctl::imex
