// The file descriptors this process has open, read from /proc/self/fd: for proving that a command
// leaves none behind.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace cumemctl {

// The numbers of the descriptors open now, in order (the listing's own left out). Empty when
// /proc/self/fd cannot be read.
std::vector<int> open_fd_numbers();

// Each open descriptor and what it refers to (the /proc/self/fd link text, e.g. "/dev/nvidiactl",
// "socket:[123]", "/memfd:x (deleted)"). Empty when /proc/self/fd cannot be read.
std::map<int, std::string> open_fds();

// What `after` has that `before` has not, as "FD -> TARGET" lines (a descriptor number reused for
// another target counts as new).
std::vector<std::string> new_fds(const std::map<int, std::string>& before, const std::map<int, std::string>& after);

}  // namespace cumemctl
