// Whether this process can open an IMEX channel: what the driver requires before it creates, exports
// or imports memory with CU_MEM_HANDLE_TYPE_FABRIC. Read from the channel folder for real, so that a
// diagnosis says what is there rather than what might be.
#pragma once

#include <string>
#include <vector>

#include "imex/channel_folder.hpp"

namespace cumemctl::gpu {

// What the channel folder holds, as this process sees it.
struct ImexChannelAccess {
    std::string dir;
    bool dir_exists = false;
    std::vector<std::string> nodes;        // channelN entries that are character devices
    std::vector<std::string> accessible;   // of those, the ones this process may read and write
    std::vector<std::string> not_devices;  // channelN entries that are not character devices
    bool per_user = false;                 // the folder holds per-user channels (imex::holds_per_user_channels)
    std::string per_user_setup;            // the command that gives this user one (imex::per_user_setup_command)

    // One sentence: "/dev/nvidia-caps-imex-channels does not exist", "... holds no channel node",
    // "channel0 exists but this process (uid 1000) may not read and write it", "channel0 is accessible".
    std::string describe() const;
    // What gives this process a channel it may open: imex-setup for every user (with its check), or,
    // where the folder holds channels this process may not open, the command that gives this user one.
    std::string remedy() const;
};

// Reads the channel folder through src/imex's model (links are not followed). Never throws: an
// unreadable folder says so.
ImexChannelAccess read_channel_access(const std::string& dir = imex::kImexChannelDir);

}  // namespace cumemctl::gpu
