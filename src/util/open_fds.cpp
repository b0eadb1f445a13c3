#include "util/open_fds.hpp"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>

#include <fmt/format.h>

namespace cumemctl {

std::vector<int> open_fd_numbers() {
    std::vector<int> fds;
    DIR* dir = opendir("/proc/self/fd");
    if (dir == nullptr) return fds;
    const int own = dirfd(dir);
    while (const dirent* e = readdir(dir)) {
        const std::string_view name = e->d_name;
        int fd = -1;
        const auto [ptr, ec] = std::from_chars(name.data(), name.data() + name.size(), fd);
        if (ec == std::errc{} && ptr == name.data() + name.size() && fd != own) fds.push_back(fd);
    }
    closedir(dir);
    std::sort(fds.begin(), fds.end());
    return fds;
}

std::map<int, std::string> open_fds() {
    std::map<int, std::string> fds;
    for (const int fd : open_fd_numbers()) {
        char target[512];
        const std::string link = fmt::format("/proc/self/fd/{}", fd);
        const ssize_t n = readlink(link.c_str(), target, sizeof target - 1);
        if (n < 0 && errno == ENOENT) continue;  // closed since the listing
        fds[fd] = n < 0 ? std::string("?") : std::string(target, static_cast<std::size_t>(n));
    }
    return fds;
}

std::vector<std::string> new_fds(const std::map<int, std::string>& before, const std::map<int, std::string>& after) {
    std::vector<std::string> lines;
    for (const auto& [fd, target] : after) {
        const auto it = before.find(fd);
        if (it == before.end() || it->second != target) lines.push_back(fmt::format("{} -> {}", fd, target));
    }
    return lines;
}

}  // namespace cumemctl
