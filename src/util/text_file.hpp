// Reading small text files such as /proc/devices, with errors a person can act on.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace cumemctl {

class Error;  // base/error.hpp: what the readers throw and text_file_error returns

// The most text_file reads: /proc files are a few KiB; anything larger is not the file we want.
inline constexpr std::size_t kMaxTextFileBytes = 1 << 20;

// Reads the whole file at `path` (proc files report size 0, so it reads to end of file), a regular file
// only: a FIFO, a device or a terminal is refused without waiting on it. Throws Error: unavailable
// (exit 3) when it does not exist, is no regular file or cannot be read, permission (exit 4) when access
// is denied; the message names the path and `what` (e.g. "--proc-devices"), and the remedy is `remedy`.
std::string read_text_file(const std::string& path, const std::string& what, const std::string& remedy);

// The same, for a file that may be absent or unreadable: nullopt then. Like read_text_file it opens
// close-on-exec (std::ifstream does not), so that no second process started meanwhile from another
// thread inherits it.
std::optional<std::string> try_read_text_file(const std::string& path);

// read_text_file's reading of a file already open (`fd`), and its error for errno `err`.
std::string read_text_fd(int fd, const std::string& path, const std::string& what, const std::string& remedy);
Error text_file_error(const std::string& path, const std::string& what, const std::string& remedy, int err);

}  // namespace cumemctl
