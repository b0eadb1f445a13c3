// The channel folder, DEVROOT/dev/nvidia-caps-imex-channels, opened without following links: every
// node change happens relative to its descriptor.
#pragma once

#include <string>

#include "imex/channel_node.hpp"
#include "util/unique_fd.hpp"

namespace cumemctl::imex {

// The device root, opened once: every later step (dev/, the channel folder, the nodes) works under
// this descriptor, and whether it is this system's own root is decided on it too.
struct DevRoot {
    UniqueFd fd;       // O_PATH; invalid when missing or not a folder (open_channel_dir says so)
    std::string path;  // as given, for messages
    int error = 0;     // errno when fd is invalid
    UniqueFd dev;      // DEVROOT/dev, O_PATH, opened without following a link; invalid: dev_error says why
    int dev_error = 0;
    bool real = false;  // this system's own root, or one whose dev/ is this system's /dev (a bind mount)
};

// Opens DEVROOT (open_checked; as root with Check::everything: each folder on the way root's and not
// writable by others, each link root's). Throws Error (permission, exit 4) when root refuses a folder
// or link on the way; a missing one is reported by open_channel_dir (usage, exit 2).
DevRoot open_dev_root(const std::string& dev_root);

// The open channel folder, or the knowledge that it is missing.
struct ChannelDir {
    UniqueFd parent;       // DEVROOT/dev
    UniqueFd fd;           // the folder itself; invalid when it is missing and was not to be made
    std::string path;      // DEVROOT/dev/nvidia-caps-imex-channels, for messages
    bool created = false;  // this run made it
    NodeState state;       // its owner and mode (kind directory), or kind missing
};

// The channel folder's path under a device root: "/dev/nvidia-caps-imex-channels" for "/".
std::string channel_dir_path(const std::string& dev_root);

// Opens the channel folder under the opened DEVROOT; dev/ and the folder are opened with O_NOFOLLOW.
// With `create`, a missing folder is made 0755 whatever the umask (another run making it at the same
// moment is fine). Throws Error: usage (exit 2) when DEVROOT or DEVROOT/dev is not a directory;
// permission (exit 4) when access or creation is denied, or when a user other than root (or this
// process's own) owns dev/ or the folder or their group or others can write them (looked at on their
// descriptors before anything is made in them); failed (exit 1) when dev/ or the folder is a symbolic
// link or not a directory (refused, never changed). The usage errors name the device root through
// setting_name.
ChannelDir open_channel_dir(DevRoot root, bool create);

// Removes the folder if this run made it and it is still empty: after a failure, so that nothing is
// left half-done. Best effort; another run's nodes in it keep it.
void undo_channel_dir(ChannelDir& dir);

}  // namespace cumemctl::imex
