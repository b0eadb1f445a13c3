#include "util/file_mode.hpp"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <deque>

#include <fmt/format.h>

#include "base/error.hpp"

namespace cumemctl {

mode_t parse_mode(std::string_view text, std::string_view what) {
    std::string_view digits = text;
    if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'o' || digits[1] == 'O')) digits.remove_prefix(2);
    unsigned value = 0;
    bool good = !digits.empty() && digits.size() <= 4;
    for (char c : digits) {
        if (c < '0' || c > '7') {
            good = false;
            break;
        }
        value = value * 8 + static_cast<unsigned>(c - '0');
    }
    if (!good) {
        throw Error(ExitCode::usage, fmt::format("invalid {} '{}': not an octal mode", what, text),
                    "give the mode in octal, such as 0600 (owner only) or 0660 (owner and group)");
    }
    if (value > 0777) {
        throw Error(ExitCode::usage, fmt::format("invalid {} '{}': set-id and sticky bits are not allowed", what, text),
                    "give permission bits only, 0000 to 0777");
    }
    return static_cast<mode_t>(value);
}

std::string format_mode(mode_t mode) {
    return fmt::format("{:04o}", static_cast<unsigned>(mode & 07777));
}

std::optional<std::string> others_can_change(const struct stat& st, uid_t also_trusted, bool sticky_ok) {
    if (st.st_uid != 0 && st.st_uid != also_trusted) return fmt::format("belongs to uid {}", st.st_uid);
    const mode_t mode = st.st_mode & 07777;
    if (sticky_ok && S_ISDIR(st.st_mode) && (mode & S_ISVTX) != 0) return std::nullopt;
    if ((mode & S_IWOTH) != 0) return fmt::format("is writable by every user (mode {})", format_mode(mode));
    if ((mode & S_IWGRP) != 0)
        return fmt::format("is writable by its group, gid {} (mode {})", st.st_gid, format_mode(mode));
    return std::nullopt;
}

namespace {

// The names of a path's components, in order.
std::deque<std::string> components(std::string_view path) {
    std::deque<std::string> out;
    std::size_t start = 0;
    while (start <= path.size()) {
        const std::size_t end = std::min(path.find('/', start), path.size());
        if (end > start) out.emplace_back(path.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

std::string parent_of(const std::string& path) {
    const std::size_t slash = path.rfind('/');
    return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

std::string link_target(const std::string& path) {
    std::string target(PATH_MAX, '\0');
    const ssize_t n = ::readlink(path.c_str(), target.data(), target.size());
    target.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    return target;
}

}  // namespace

std::optional<UnsafePath> unsafe_path(const std::string& path) {
    std::string start = path;
    if (start.empty() || start[0] != '/') {
        char cwd[PATH_MAX] = {};
        if (::getcwd(cwd, sizeof cwd) == nullptr) return UnsafePath{path, "the working folder cannot be named"};
        start = std::string(cwd) + "/" + start;
    }
    std::deque<std::string> todo = components(start);
    std::string here = "/";
    struct stat st {};
    if (::stat("/", &st) != 0) return UnsafePath{"/", std::strerror(errno)};
    if (auto why = others_can_change(st, 0, true)) return UnsafePath{"/", *why};
    int links = 0;
    // As the kernel resolves it, one component at a time: each link's target is walked in its place.
    while (!todo.empty()) {
        const std::string name = todo.front();
        todo.pop_front();
        if (name == ".") continue;
        if (name == "..") {
            here = parent_of(here);
            continue;
        }
        std::string next = here == "/" ? std::string() : here;
        next.append("/").append(name);
        if (::lstat(next.c_str(), &st) != 0) {
            // Nothing there to load: the loader says so; a folder that others could fill was refused already.
            if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;
            return UnsafePath{next, std::strerror(errno)};
        }
        if (S_ISLNK(st.st_mode)) {
            if (++links > 40) return UnsafePath{next, "has too many symbolic links on the way"};
            const std::string target = link_target(next);
            if (!target.empty() && target[0] == '/') here = "/";
            const std::deque<std::string> more = components(target);
            todo.insert(todo.begin(), more.begin(), more.end());
            continue;
        }
        if (auto why = others_can_change(st, 0, !todo.empty())) return UnsafePath{next, *why};
        here = next;
    }
    return std::nullopt;
}

std::optional<UnsafePath> unsafe_for_root(const std::string& path) {
    if (::geteuid() != 0 || path.find('/') == std::string::npos) return std::nullopt;
    return unsafe_path(path);
}

void require_safe_for_root(const std::string& path, std::string_view what, std::string_view instead) {
    const std::optional<UnsafePath> unsafe = unsafe_for_root(path);
    if (!unsafe) return;
    throw Error(Problem{.exit_code = ExitCode::permission,
                        .message = fmt::format("refusing {} {}: {} {}", what, path, unsafe->path, unsafe->why),
                        .cause = "as root, cumemctl loads and runs nothing that a user other than root could change",
                        .remedy = fmt::format("chown root:root {0} && chmod go-w {0}, or {1}", unsafe->path, instead)});
}

}  // namespace cumemctl
