// Host names compressed as Slurm writes them: "gpu[001-003,007],login1".
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cumemctl {

// The hosts as one Slurm-style host list: names that differ only in a trailing number of the same
// width are merged into ranges ("gpu001", "gpu002", "gpu003" -> "gpu[001-003]"), others are listed as
// they are; duplicates count once. Groups come in the order of their first name, sorted. No range holds
// more than 65,536 hosts, the most that Slurm reads in one ("x[00000-65535],x[65536-99999]" stays
// within it).
std::string compress_hostlist(std::vector<std::string> hosts);

// The same host list as its groups, one item each ("gpu[001-003]", "login1"), for a caller that joins
// them otherwise: fleet's "fabric-alloc@gpu[0-7], imex-channels" (names of any kind compress alike).
std::vector<std::string> compress_hostlist_items(std::vector<std::string> hosts);

// Whether `name` is one host by Slurm's host-list grammar, the only kind of name fleet puts on a drain
// list: 1 to 255 letters, digits, '.', '-' and '_', starting with a letter or a digit (so no bracket
// range, comma, space, '=' or control character, nothing scontrol reads as an option), and none of the
// words Slurm reads as many nodes or as no node ("ALL", "DEFAULT", in any case).
bool is_single_host(std::string_view name);

// Why `name` is not one host, in words ("'ALL' is Slurm's word for every node"); "" where it is one.
std::string not_single_host(std::string_view name);

// A Slurm host list expanded: "gpu[001-003,007],login1" -> gpu001, gpu002, gpu003, gpu007, login1 (in
// that order; several bracket groups in one name multiply out). Throws a usage error naming `what` (the
// option it came from) on an unbalanced bracket, a range that runs backwards, a list of more than a
// million names, or a name that is not one host (is_single_host: "ALL", "a b").
std::vector<std::string> expand_hostlist(std::string_view text, std::string_view what);

}  // namespace cumemctl
