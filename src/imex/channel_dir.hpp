// The channel folder, DEVROOT/dev/nvidia-caps-imex-channels, opened without following links: every
// node change happens relative to its descriptor.
#pragma once

#include <string>

#include "imex/channel_node.hpp"
#include "util/unique_fd.hpp"

namespace cumemctl::imex {

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

// Opens the channel folder. DEVROOT itself may be reached through links; dev/ and the folder are
// opened with O_NOFOLLOW. With `create`, a missing folder is made 0755 whatever the umask (another
// run making it at the same moment is fine). Throws Error: usage (exit 2) when DEVROOT or DEVROOT/dev
// is not a directory; permission (exit 4) when access or creation is denied, or when a user other than
// root (or this process's own) owns dev/ or the folder or their group or others can write them
// (looked at on their descriptors before anything is made in them); failed (exit 1) when dev/
// or the folder is a symbolic link or not a directory (refused, never changed). The usage errors name
// the device root through setting_name.
ChannelDir open_channel_dir(const std::string& dev_root, bool create);

// Removes the folder if this run made it and it is still empty: after a failure, so that nothing is
// left half-done. Best effort; another run's nodes in it keep it.
void undo_channel_dir(ChannelDir& dir);

}  // namespace cumemctl::imex
