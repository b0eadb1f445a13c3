#include "util/mount_owner.hpp"

#include <sys/statfs.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/format.h>

namespace cumemctl {
namespace {

constexpr unsigned long kFuseMagic = 0x65735546;  // FUSE_SUPER_MAGIC: fuse, fuseblk and fuse.* alike

// The fields of one mountinfo line, split at single spaces (the kernel escapes spaces in names as \040).
std::vector<std::string_view> fields(std::string_view line) {
    std::vector<std::string_view> out;
    std::size_t start = 0;
    while (start <= line.size()) {
        const std::size_t end = std::min(line.find(' ', start), line.size());
        out.push_back(line.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

bool parse_uint(std::string_view text, unsigned long& value) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

// The value of `key=` in a comma list of options.
std::optional<std::string_view> option(std::string_view options, std::string_view key) {
    while (!options.empty()) {
        const std::size_t comma = std::min(options.find(','), options.size());
        const std::string_view one = options.substr(0, comma);
        if (one.size() > key.size() && one.substr(0, key.size()) == key && one[key.size()] == '=')
            return one.substr(key.size() + 1);
        options.remove_prefix(std::min(comma + 1, options.size()));
    }
    return std::nullopt;
}

}  // namespace

std::optional<FuseMount> fuse_mount_of(std::string_view mountinfo, dev_t dev) {
    const std::string wanted = fmt::format("{}:{}", major(dev), minor(dev));
    while (!mountinfo.empty()) {
        const std::size_t end = std::min(mountinfo.find('\n'), mountinfo.size());
        const auto f = fields(mountinfo.substr(0, end));
        mountinfo.remove_prefix(std::min(end + 1, mountinfo.size()));
        // id parent major:minor root mount-point options [optional...] - type source super-options
        if (f.size() < 10 || f[2] != wanted) continue;
        std::size_t dash = 6;
        while (dash < f.size() && f[dash] != "-") ++dash;
        if (dash + 3 >= f.size()) continue;
        const auto user = option(f[dash + 3], "user_id");
        unsigned long uid = 0;
        if (!user || !parse_uint(*user, uid)) return std::nullopt;
        return FuseMount{static_cast<uid_t>(uid), std::string(f[dash + 1])};
    }
    return std::nullopt;
}

std::optional<std::string> owners_unvouched(int fd, const struct stat& st) {
    struct statfs fs {};
    // A FUSE program can refuse to say: what cannot be told is not believed.
    if (::fstatfs(fd, &fs) != 0)
        return fmt::format("is on a file system that does not say what it is ({})", std::strerror(errno));
    if (static_cast<unsigned long>(fs.f_type) != kFuseMagic) return std::nullopt;
    std::ifstream in("/proc/self/mountinfo");
    std::ostringstream text;
    text << in.rdbuf();
    const auto mount = fuse_mount_of(text.str(), st.st_dev);
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
