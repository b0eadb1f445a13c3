#include "util/index_list.hpp"

#include <algorithm>
#include <charconv>
#include <string>

#include <fmt/format.h>

#include "base/error.hpp"
#include "util/comma_list.hpp"

namespace cumemctl {
namespace {

long long parse_number(std::string_view text, std::string_view what) {
    long long value = -1;
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || ec != std::errc{} || ptr != end) {
        throw Error(ExitCode::usage, fmt::format("invalid {} '{}': not a number", what, text),
                    fmt::format("give a {} as a non-negative number, a list (0,2) or a range (0-3)", what));
    }
    if (value < 0) {
        throw Error(ExitCode::usage, fmt::format("invalid {} '{}': negative", what, text),
                    fmt::format("{} numbers start at 0", what));
    }
    return value;
}

}  // namespace

int parse_index(std::string_view text, long long limit, std::string_view what) {
    const long long value = parse_number(text, what);
    if (value >= limit) {
        throw Error(ExitCode::usage, fmt::format("{} {} is out of range", what, value),
                    fmt::format("valid {} numbers are 0 to {}", what, limit - 1));
    }
    return static_cast<int>(value);
}

std::vector<int> parse_index_list(std::string_view text, int count, std::string_view what, bool allow_all) {
    std::vector<int> out;
    if (allow_all && text == "all") {
        for (int i = 0; i < count; ++i) out.push_back(i);
        return out;
    }
    if (text.empty()) {
        throw Error(ExitCode::usage, fmt::format("empty {} list", what),
                    fmt::format("give {} numbers such as 0, 0,2 or 0-3{}", what, allow_all ? ", or all" : ""));
    }
    for (const std::string_view item : split_commas(text)) {
        const std::size_t dash = item.find('-', 1);
        if (dash != std::string_view::npos) {
            const long long lo = parse_number(item.substr(0, dash), what);
            const long long hi = parse_number(item.substr(dash + 1), what);
            if (hi < lo) {
                throw Error(ExitCode::usage, fmt::format("invalid {} range '{}'", what, item),
                            "a range goes from the lower number to the higher");
            }
            for (long long v = lo; v <= hi; ++v) {
                out.push_back(parse_index(std::to_string(v), count, what));
            }
        } else {
            out.push_back(parse_index(item, count, what));
        }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

}  // namespace cumemctl
