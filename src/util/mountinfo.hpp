// The kernel's mount table as /proc/self/mountinfo writes it, one parser for every caller: which file
// system is mounted where, of what type, by whom (a FUSE mount's user_id).
#pragma once

#include <string_view>
#include <vector>

namespace cumemctl {

// One line: ID PARENT MAJOR:MINOR ROOT MOUNT_POINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER_OPTIONS.
// The views point into the text; a name's spaces stay escaped as the kernel writes them (\040).
struct MountLine {
    std::string_view device;         // "0:35"
    std::string_view mount_point;    // "/dev/nvidia-caps-imex-channels"
    std::string_view type;           // "tmpfs", "fuse.sshfs"
    std::string_view super_options;  // "rw,user_id=1000,group_id=1000"
};

// The lines of a mountinfo text, in order; a line without the fields up to SUPER_OPTIONS is left out.
std::vector<MountLine> parse_mountinfo(std::string_view text);

}  // namespace cumemctl
