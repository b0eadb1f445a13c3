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
    std::string path;  // the file, or the folder that others can change
    std::string why;   // others_can_change's words, or why the path cannot be looked at
};

// Whether root may load or run `path`: nullopt when this process is not root, when `path` is a bare
// name (no '/': the dynamic loader's search of the system's folders), or when the file and every
// folder on the way to it, each symbolic link followed as the kernel would and the folder that holds
// it looked at too, are root's and not writable by group or others (a sticky root folder such as
// /tmp passes; what is in it is looked at too). Otherwise the first file or folder that others can
// change.
std::optional<UnsafePath> unsafe_for_root(const std::string& path);

// unsafe_for_root without the question of who runs: the walk itself (tests).
std::optional<UnsafePath> unsafe_path(const std::string& path);

// Throws Error (permission, exit 4) when unsafe_for_root finds that others can change `path`, the
// `what` ("the driver library") that an option or the environment chose: the message names the file
// or folder and why, the remedy says how to make it root's or, `instead`, what else to do.
void require_safe_for_root(const std::string& path, std::string_view what, std::string_view instead);

}  // namespace cumemctl
