// Writing a small file so that a reader sees the old content or the new, never a part: a temporary
// dot file in the same folder (.NAME.XXXXXX), written, flushed to disk and renamed over the old one,
// then the folder flushed.
#pragma once

#include <string>

namespace cumemctl {

// Writes `text` to `path` atomically with mode `mode` (the umask does not apply), making the folder
// (mode 0755) when it is missing. Throws Error naming the path: permission (exit 4) when access is
// denied, failed (exit 1) otherwise.
void write_file_atomically(const std::string& path, const std::string& text, unsigned mode);

}  // namespace cumemctl
