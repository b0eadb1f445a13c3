// The one comma splitter: "a,b,c" as people type lists (devices, checks, locations, handle types, a
// workload pattern). Each caller judges the items in its own words.
#pragma once

#include <string_view>
#include <vector>

namespace cumemctl {

// The items of `text` between commas, in order, empty ones included: "" is one empty item, "a,,b"
// three. The views point into `text`.
std::vector<std::string_view> split_commas(std::string_view text);

}  // namespace cumemctl
