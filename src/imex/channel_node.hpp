// An IMEX channel node as wanted and as found: the model that planning compares, without system calls.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <string>
#include <string_view>

namespace cumemctl::imex {

// What is at a node's path.
enum class NodeKind { missing, char_device, block_device, regular_file, directory, symlink, fifo, socket };

// What was found at a channel's path (device numbers, owner and mode only for something that exists).
struct NodeState {
    NodeKind kind = NodeKind::missing;
    unsigned major = 0;
    unsigned minor = 0;
    uid_t uid = 0;
    gid_t gid = 0;
    mode_t mode = 0;  // permission bits only
};

// The node a channel should be: character device MAJOR:CHANNEL with an owner and permission bits.
struct NodeSpec {
    int channel = 0;
    unsigned major = 0;
    uid_t uid = 0;
    gid_t gid = 0;
    mode_t mode = 0;
    // The minor number is the channel number.
    unsigned channel_minor() const { return static_cast<unsigned>(channel); }
};

// "channel7": the node's name inside the channel folder.
std::string channel_name(int channel);

// "242:7": a device number as ls and stat show it.
std::string format_device(unsigned major, unsigned minor);

// "character device", "regular file", ... ("absent" for missing).
std::string_view node_kind_name(NodeKind kind);

// A short stable key for JSON: "char", "block", "file", "directory", "symlink", "fifo", "socket",
// "missing".
std::string_view node_kind_key(NodeKind kind);

// The state that lstat (fstatat with AT_SYMLINK_NOFOLLOW) results describe.
NodeState node_state_from_stat(const struct stat& st);

}  // namespace cumemctl::imex
