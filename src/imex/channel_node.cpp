#include "imex/channel_node.hpp"

#include <sys/sysmacros.h>

#include <fmt/format.h>

namespace cumemctl::imex {

std::string channel_name(int channel) {
    return fmt::format("channel{}", channel);
}

std::string format_device(unsigned major, unsigned minor) {
    return fmt::format("{}:{}", major, minor);
}

std::string_view node_kind_name(NodeKind kind) {
    switch (kind) {
        case NodeKind::missing:
            return "absent";
        case NodeKind::char_device:
            return "character device";
        case NodeKind::block_device:
            return "block device";
        case NodeKind::regular_file:
            return "regular file";
        case NodeKind::directory:
            return "directory";
        case NodeKind::symlink:
            return "symbolic link";
        case NodeKind::fifo:
            return "FIFO";
        case NodeKind::socket:
            return "socket";
    }
    return "unknown";
}

std::string_view node_kind_key(NodeKind kind) {
    switch (kind) {
        case NodeKind::missing:
            return "missing";
        case NodeKind::char_device:
            return "char";
        case NodeKind::block_device:
            return "block";
        case NodeKind::regular_file:
            return "file";
        case NodeKind::directory:
            return "directory";
        case NodeKind::symlink:
            return "symlink";
        case NodeKind::fifo:
            return "fifo";
        case NodeKind::socket:
            return "socket";
    }
    return "unknown";
}

NodeState node_state_from_stat(const struct stat& st) {
    NodeState s;
    switch (st.st_mode & S_IFMT) {
        case S_IFCHR:
            s.kind = NodeKind::char_device;
            break;
        case S_IFBLK:
            s.kind = NodeKind::block_device;
            break;
        case S_IFDIR:
            s.kind = NodeKind::directory;
            break;
        case S_IFLNK:
            s.kind = NodeKind::symlink;
            break;
        case S_IFIFO:
            s.kind = NodeKind::fifo;
            break;
        case S_IFSOCK:
            s.kind = NodeKind::socket;
            break;
        default:
            s.kind = NodeKind::regular_file;
            break;
    }
    if (s.kind == NodeKind::char_device || s.kind == NodeKind::block_device) {
        s.major = major(st.st_rdev);
        s.minor = minor(st.st_rdev);
    }
    s.uid = st.st_uid;
    s.gid = st.st_gid;
    s.mode = st.st_mode & 07777;
    return s;
}

}  // namespace cumemctl::imex
