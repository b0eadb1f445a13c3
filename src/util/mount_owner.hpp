// Whether a file system can vouch for who owns its files. On a FUSE file system, owners and modes are
// whatever its program answers, and that program runs as whoever mounted it: a user's mount (with
// allow_other) can show root's name and mode 0755 on files that user changes at will.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

namespace cumemctl {

// Who mounted the FUSE file system of device `dev`, from a /proc/self/mountinfo text: its super
// options' user_id, and the type ("fuse.sshfs"). Nullopt where no line has that device or its line
// names no user_id.
struct FuseMount {
    uid_t user = 0;
    std::string type;
};
std::optional<FuseMount> fuse_mount_of(std::string_view mountinfo, dev_t dev);

// Why the file system that `fd` lies on (`st`, fstat of it) cannot vouch for its owners: a FUSE file
// system that a user other than root mounted, one whose mounter this process cannot find, or one that
// does not answer fstatfs. Nullopt on every other file system.
std::optional<std::string> owners_unvouched(int fd, const struct stat& st);

}  // namespace cumemctl
