// Host names compressed as Slurm writes them: "gpu[001-003,007],login1".
#pragma once

#include <string>
#include <vector>

namespace cumemctl {

// The hosts as one Slurm-style host list: names that differ only in a trailing number of the same
// width are merged into ranges ("gpu001", "gpu002", "gpu003" -> "gpu[001-003]"), others are listed as
// they are; duplicates count once. Groups come in the order of their first name, sorted.
std::string compress_hostlist(std::vector<std::string> hosts);

}  // namespace cumemctl
