// Permission bits as people type and read them: "0600", "660".
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

namespace cumemctl {

// Parses an octal permission mode of one to four digits, at most 0777 (a device node has no use for
// set-id or sticky bits). Throws Error (usage) on anything else, naming `what` (e.g. "--mode").
mode_t parse_mode(std::string_view text, std::string_view what);

// Formats permission bits as four octal digits: "0600".
std::string format_mode(mode_t mode);

}  // namespace cumemctl
