// Writing a small file so that a reader sees the old content or the new, never a part: a temporary
// dot file in the same folder (.NAME.XXXXXX), written, flushed to disk and renamed over the old one,
// then the folder flushed. The folder is opened once (open_folder_to_write: as root, through no link
// that another user could have placed) and every step works in it by its descriptor.
#pragma once

#include <string>

namespace cumemctl {

// Whether write_file_atomically makes a missing folder: a state file's own folder (/var/lib/cumemctl)
// yes; a folder a user named (--output) no, where a typo would put the file where no reader looks.
enum class MissingFolder { make, refuse };

// Writes `text` to `path` atomically with mode `mode` (the umask does not apply); its folder is made
// (mode 0755) when missing and `missing` says so. Throws Error naming the path: permission (exit 4)
// when access is denied or root refuses a link on the way, failed (exit 1) otherwise (a missing folder
// that is not to be made too).
void write_file_atomically(const std::string& path, const std::string& text, unsigned mode, MissingFolder missing);

}  // namespace cumemctl
