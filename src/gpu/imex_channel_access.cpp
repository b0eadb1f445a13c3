#include "gpu/imex_channel_access.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

namespace cumemctl {

ImexChannelAccess check_imex_channels(const std::string& dir) {
    ImexChannelAccess a;
    a.dir = dir;
    const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return a;
    a.dir_exists = true;
    DIR* d = fdopendir(fd);
    if (d == nullptr) {
        close(fd);
        return a;
    }
    while (const dirent* e = readdir(d)) {
        const std::string name = e->d_name;
        if (name.rfind("channel", 0) != 0) continue;
        struct stat st {};
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (!S_ISCHR(st.st_mode)) {
            a.not_devices.push_back(name);
            continue;
        }
        a.nodes.push_back(name);
        if (faccessat(dirfd(d), e->d_name, R_OK | W_OK, AT_EACCESS) == 0) a.accessible.push_back(name);
    }
    closedir(d);
    std::sort(a.nodes.begin(), a.nodes.end());
    std::sort(a.accessible.begin(), a.accessible.end());
    std::sort(a.not_devices.begin(), a.not_devices.end());
    return a;
}

std::string ImexChannelAccess::describe() const {
    if (!dir_exists) return fmt::format("{} does not exist", dir);
    if (!accessible.empty()) {
        return fmt::format("{}/{} is a channel node this process may read and write", dir, accessible.front());
    }
    if (!nodes.empty()) {
        return fmt::format("{}/{} exists but this process (uid {}) may not read and write it", dir, nodes.front(),
                           geteuid());
    }
    if (!not_devices.empty()) {
        return fmt::format("{} holds no channel node: {} is not a character device", dir, not_devices.front());
    }
    return fmt::format("{} holds no channel node", dir);
}

}  // namespace cumemctl
