#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util/mount_owner.hpp"
#include "util/unique_fd.hpp"

using namespace cumemctl;

namespace {

// Lines as the kernel writes them: optional fields before " - ", escaped spaces in a mount point.
constexpr const char* kMountinfo =
    "22 1 8:2 / / rw,relatime shared:1 - ext4 /dev/sda2 rw\n"
    "40 22 0:35 / /home/alice/fake\\040root rw,nosuid,nodev,relatime shared:20 master:3 - fuse.sshfs "
    "alice@h:/ rw,user_id=1000,group_id=1000,allow_other\n"
    "41 22 0:36 / /cvmfs/sw rw,nosuid,nodev - fuse cvmfs2 ro,user_id=0,group_id=0,default_permissions,allow_other\n"
    "42 22 0:37 / /mnt/odd rw - fuse odd rw,group_id=0\n"
    "43 22 0:38 / /mnt/bad rw - fuse bad rw,user_id=12x\n";

}  // namespace

TEST_CASE("fuse_mount_of names the user whose program answers for a FUSE mount's owners") {
    const auto alice = fuse_mount_of(kMountinfo, makedev(0, 35));
    REQUIRE(alice.has_value());
    CHECK(alice->user == 1000);
    CHECK(alice->type == "fuse.sshfs");
    const auto cvmfs = fuse_mount_of(kMountinfo, makedev(0, 36));
    REQUIRE(cvmfs.has_value());
    CHECK(cvmfs->user == 0);
    CHECK(cvmfs->type == "fuse");
}

TEST_CASE("fuse_mount_of finds no mounter where the line has none, a bad one, or no line matches") {
    CHECK_FALSE(fuse_mount_of(kMountinfo, makedev(0, 37)).has_value());  // no user_id
    CHECK_FALSE(fuse_mount_of(kMountinfo, makedev(0, 38)).has_value());  // not a number
    CHECK_FALSE(fuse_mount_of(kMountinfo, makedev(0, 99)).has_value());  // no such device
    CHECK_FALSE(fuse_mount_of("", makedev(0, 35)).has_value());
    CHECK_FALSE(fuse_mount_of("40 22 0:35 / /x rw - fuse", makedev(0, 35)).has_value());  // cut short
}

TEST_CASE("owners_unvouched believes a file system that is not FUSE") {
    const UniqueFd fd(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
    REQUIRE(fd.valid());
    struct stat st {};
    REQUIRE(::fstat(fd.get(), &st) == 0);
    struct statfs fs {};
    REQUIRE(::fstatfs(fd.get(), &fs) == 0);
    if (fs.f_type == 0x65735546) return;  // this machine's root is FUSE itself: nothing to learn here
    CHECK_FALSE(owners_unvouched(fd.get(), st).has_value());
}
