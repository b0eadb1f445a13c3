// Host names compressed as Slurm writes them: "gpu[001-003,007],login1".
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cumemctl {

// The hosts as one Slurm-style host list: names that differ only in a trailing number of the same
// width are merged into ranges ("gpu001", "gpu002", "gpu003" -> "gpu[001-003]"), others are listed as
// they are; duplicates count once. Groups come in the order of their first name, sorted.
std::string compress_hostlist(std::vector<std::string> hosts);

// The same host list as its groups, one item each ("gpu[001-003]", "login1"), for a caller that joins
// them otherwise: fleet's "fabric-alloc@gpu[0-7], imex-channels" (names of any kind compress alike).
std::vector<std::string> compress_hostlist_items(std::vector<std::string> hosts);

// A Slurm host list expanded: "gpu[001-003,007],login1" -> gpu001, gpu002, gpu003, gpu007, login1 (in
// that order; several bracket groups in one name multiply out). Throws a usage error naming `what` (the
// option it came from) on an unbalanced bracket, a range that runs backwards or a list of more than a
// million names.
std::vector<std::string> expand_hostlist(std::string_view text, std::string_view what);

}  // namespace cumemctl
