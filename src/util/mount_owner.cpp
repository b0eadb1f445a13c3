#include "util/mount_owner.hpp"

#include <sys/statfs.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include <fmt/format.h>

#include "util/comma_list.hpp"
#include "util/mountinfo.hpp"
#include "util/text_file.hpp"

namespace cumemctl {
namespace {

constexpr unsigned long kFuseMagic = 0x65735546;  // FUSE_SUPER_MAGIC: fuse, fuseblk and fuse.* alike

bool parse_uint(std::string_view text, unsigned long& value) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

}  // namespace

std::optional<FuseMount> fuse_mount_of(std::string_view mountinfo, dev_t dev) {
    const std::string wanted = fmt::format("{}:{}", major(dev), minor(dev));
    for (const MountLine& m : parse_mountinfo(mountinfo)) {
        if (m.device != wanted) continue;
        for (const std::string_view option : split_commas(m.super_options)) {
            unsigned long uid = 0;
            if (option.substr(0, 8) == "user_id=" && parse_uint(option.substr(8), uid))
                return FuseMount{static_cast<uid_t>(uid), std::string(m.type)};
        }
        return std::nullopt;
    }
    return std::nullopt;
}

std::optional<std::string> owners_unvouched(int fd, const struct stat& st) {
    struct statfs fs {};
    // A FUSE program can refuse to say: what cannot be told is not believed.
    if (::fstatfs(fd, &fs) != 0)
        return fmt::format("is on a file system that does not say what it is ({})", std::strerror(errno));
    if (static_cast<unsigned long>(fs.f_type) != kFuseMagic) return std::nullopt;
    const auto mount = fuse_mount_of(try_read_text_file("/proc/self/mountinfo").value_or(""), st.st_dev);
    if (!mount)
        return std::string(
            "is on a FUSE file system whose mounter cannot be found: its owners are what its "
            "program says");
    if (mount->user == 0) return std::nullopt;
    return fmt::format(
        "is on a {} file system that uid {} mounted: its owners and modes are what that user's "
        "program says",
        mount->type, mount->user);
}

}  // namespace cumemctl
