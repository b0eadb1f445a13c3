// Lists of small non-negative integers as people type them: "0", "0,2", "0-3,7", "all".
#pragma once

#include <string_view>
#include <vector>

namespace cumemctl {

// Parses a comma-separated list of numbers and inclusive ranges into a sorted list without repeats.
// "all" (when allow_all) returns every index below count. Throws UsageError naming `what` (for example
// "device") on anything else, on a negative number, or on an index at or above count.
std::vector<int> parse_index_list(std::string_view text, int count, std::string_view what, bool allow_all = true);

// Parses one non-negative decimal integer below limit; throws UsageError naming `what` otherwise.
int parse_index(std::string_view text, long long limit, std::string_view what);

}  // namespace cumemctl
