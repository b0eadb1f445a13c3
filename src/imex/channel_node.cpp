#include "imex/channel_node.hpp"

#include <sys/sysmacros.h>

#include <fmt/format.h>

#include "base/enum_words.hpp"

namespace cumemctl::imex {

std::string channel_name(int channel) {
    return fmt::format("channel{}", channel);
}

std::string format_device(unsigned major, unsigned minor) {
    return fmt::format("{}:{}", major, minor);
}

namespace {

// A node's kind in a sentence ("a regular file") and as the JSON key's word.
constexpr auto kNodeKindNames = enum_words<NodeKind>({{NodeKind::missing, "absent"},
                                                      {NodeKind::char_device, "character device"},
                                                      {NodeKind::block_device, "block device"},
                                                      {NodeKind::regular_file, "regular file"},
                                                      {NodeKind::directory, "directory"},
                                                      {NodeKind::symlink, "symbolic link"},
                                                      {NodeKind::fifo, "FIFO"},
                                                      {NodeKind::socket, "socket"}},
                                                     "unknown");
constexpr auto kNodeKindKeys = enum_words<NodeKind>({{NodeKind::missing, "missing"},
                                                     {NodeKind::char_device, "char"},
                                                     {NodeKind::block_device, "block"},
                                                     {NodeKind::regular_file, "file"},
                                                     {NodeKind::directory, "directory"},
                                                     {NodeKind::symlink, "symlink"},
                                                     {NodeKind::fifo, "fifo"},
                                                     {NodeKind::socket, "socket"}},
                                                    "unknown");

}  // namespace

std::string_view node_kind_name(NodeKind kind) {
    return kNodeKindNames.word(kind);
}

std::string_view node_kind_key(NodeKind kind) {
    return kNodeKindKeys.word(kind);
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
