// Permission bits as people type and read them ("0600", "660"), and who besides root can change a file
// or folder: the one judgement of what root may act on or load.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

namespace cumemctl {

// Parses an octal permission mode of one to four digits, at most 0777 (a device node has no use for
// set-id or sticky bits). Throws Error (usage) on anything else, naming `what` (e.g. "--mode").
mode_t parse_mode(std::string_view text, std::string_view what);

// Formats permission bits as four octal digits: "0600".
std::string format_mode(mode_t mode);

// Why someone other than root (or `also_trusted`, the user this process runs as) can change the file
// or folder that `st` describes: "belongs to uid 1000", "is writable by its group (mode 0775)", "is
// writable by every user (mode 0777)"; nullopt when only they can. With `sticky_ok`, a root folder
// with the sticky bit (/tmp) passes: others can add names to it but not rename or remove root's.
std::optional<std::string> others_can_change(const struct stat& st, uid_t also_trusted = 0, bool sticky_ok = false);

// A file or folder on the way to one, and why others can change it.
struct UnsafePath {
    std::string path;          // the file, or the folder that others can change
    std::string why;           // others_can_change's words, or why the path cannot be trusted
    bool missing = false;      // the file is missing from a folder that others can add to
    bool unvouched = false;    // on a file system whose owners are another user's word (mount_owner.hpp)
    bool folder_mode = false;  // `path` is root's folder and only its mode lets others change it
};

}  // namespace cumemctl
