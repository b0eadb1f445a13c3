#include "imex/channel_dir.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "base/error.hpp"
#include "base/setting.hpp"
#include "imex/channel_folder.hpp"
#include "util/file_mode.hpp"
#include "util/trusted_file.hpp"

namespace cumemctl::imex {
namespace {

constexpr const char* kRootRemedy = "run imex-setup as root (making device nodes needs CAP_MKNOD, and /dev is root's)";

std::string join(const std::string& dir, std::string_view name) {
    if (dir.empty() || dir.back() == '/') return dir + std::string(name);
    return dir + "/" + std::string(name);
}

[[noreturn]] void throw_errno(int err, const std::string& what, const std::string& path) {
    if (err == EACCES || err == EPERM) {
        throw Error(ExitCode::permission, fmt::format("cannot {} {}: {}", what, path, std::strerror(err)), kRootRemedy);
    }
    throw Error(ExitCode::failed, fmt::format("cannot {} {}: {}", what, path, std::strerror(err)),
                "check the path and the file system it is on");
}

// A path component that O_NOFOLLOW|O_DIRECTORY refused: a link or another file type, never changed.
[[noreturn]] void refuse_component(int parent, const char* name, const std::string& path, int err) {
    struct stat st {};
    if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) != 0) throw_errno(err, "open", path);
    const NodeKind kind = node_state_from_stat(st).kind;
    if (kind == NodeKind::directory) throw_errno(err, "open", path);
    throw Error(ExitCode::failed, fmt::format("{} is a {}, not a directory: refused", path, node_kind_name(kind)),
                kind == NodeKind::symlink
                    ? "cumemctl does not follow symbolic links on the way to channel nodes; remove the link "
                      "(imex-setup makes the folder when it is missing)"
                    : "move it away; imex-setup makes the folder when it is missing");
}

// Refuses a folder that a user other than root (or this process's own) can write: whoever can write it
// can swap the names that imex-setup makes and changes. Looked at through its descriptor, the folder
// that every later call works in.
void require_root_only(int fd, const std::string& path) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) throw_errno(errno, "stat", path);
    const std::optional<std::string> why = others_can_change(st, ::geteuid());
    if (!why) return;
    throw Error(
        Problem{.exit_code = ExitCode::permission,
                .message = fmt::format("{} {}: refused, nothing was made or changed", path, *why),
                .cause = "imex-setup works only in folders that root alone can write: whoever can write one can swap "
                         "a node's name for another file between two system calls",
                .remedy = fmt::format("chown root:root {0} && chmod go-w {0}", path)});
}

UniqueFd open_dev(DevRoot& root) {
    if (!root.fd.valid()) {
        if (root.error == ENOENT || root.error == ENOTDIR) {
            const std::string what = root.error == ENOTDIR ? "not a directory (it is a file)" : "no such directory";
            throw Error(ExitCode::usage, fmt::format("{} {}: {}", setting_name(Setting::dev_root), root.path, what),
                        "give the folder that holds dev/ (default /)");
        }
        throw_errno(root.error, "open", root.path);
    }
    const std::string dev_path = join(root.path, "dev");
    if (!root.dev.valid()) {
        const int err = root.dev_error;
        if (err == ENOENT) {
            throw Error(
                ExitCode::usage, fmt::format("{} does not exist", dev_path),
                fmt::format("{} names the folder that holds dev/ (default /)", setting_name(Setting::dev_root)));
        }
        if (err == ELOOP || err == ENOTDIR) refuse_component(root.fd.get(), "dev", dev_path, err);
        throw_errno(err, "open", dev_path);
    }
    require_root_only(root.dev.get(), dev_path);
    return std::move(root.dev);
}

}  // namespace

DevRoot open_dev_root(const std::string& dev_root) {
    CheckedOpen opened =
        open_checked(dev_root, judged_as_root() ? Check::everything : Check::none, Links::follow, true);
    if (opened.unsafe) {
        throw Error(Problem{
            .exit_code = ExitCode::permission,
            .message = fmt::format("refusing {} {}: {} {}", setting_name(Setting::dev_root), dev_root,
                                   opened.unsafe->path, opened.unsafe->why),
            .cause = "as root, imex-setup makes device nodes only under folders that root alone can change: another "
                     "user could swap a name on the way for a link to this system's /dev",
            .remedy = fmt::format("give {} a folder whose path only root can change (default /)",
                                  setting_name(Setting::dev_root))});
    }
    DevRoot root;
    root.fd = std::move(opened.fd), root.path = dev_root, root.error = opened.error;
    if (root.fd.valid()) {
        root.dev.reset(::openat(root.fd.get(), "dev", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!root.dev.valid()) root.dev_error = errno;
    }
    // This system's own: the root itself, or a dev/ under it that is this system's /dev (a bind mount).
    const auto same = [](const UniqueFd& fd, const char* path) {
        struct stat system {
        }, given{};
        return fd.valid() && ::stat(path, &system) == 0 && ::fstat(fd.get(), &given) == 0 &&
               system.st_dev == given.st_dev && system.st_ino == given.st_ino;
    };
    root.real = same(root.fd, "/") || same(root.dev, "/dev");
    return root;
}

std::string channel_dir_path(const std::string& dev_root) {
    return join(join(dev_root, "dev"), kImexChannelDirName);
}

ChannelDir open_channel_dir(DevRoot root, bool create) {
    ChannelDir dir;
    dir.path = channel_dir_path(root.path);
    dir.parent = open_dev(root);
    const std::string name(kImexChannelDirName);
    // Two rounds: a folder made (or removed) by another run between our open and mkdir is looked at again.
    for (int round = 0; round < 3 && !dir.fd.valid(); ++round) {
        dir.fd.reset(::openat(dir.parent.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (dir.fd.valid()) break;
        const int err = errno;
        if (err == ELOOP || err == ENOTDIR) refuse_component(dir.parent.get(), name.c_str(), dir.path, err);
        if (err != ENOENT) throw_errno(err, "open", dir.path);
        if (!create) return dir;
        if (::mkdirat(dir.parent.get(), name.c_str(), 0755) == 0) {
            dir.created = true;
        } else if (errno != EEXIST) {
            throw_errno(errno, "create", dir.path);
        }
    }
    if (!dir.fd.valid()) throw_errno(ENOENT, "open", dir.path);
    // The umask may have narrowed mkdirat's mode; the folder is 0755 whatever it is.
    if (dir.created && ::fchmod(dir.fd.get(), 0755) != 0) throw_errno(errno, "set the mode of", dir.path);
    require_root_only(dir.fd.get(), dir.path);
    struct stat st {};
    if (::fstat(dir.fd.get(), &st) != 0) throw_errno(errno, "stat", dir.path);
    dir.state = node_state_from_stat(st);
    return dir;
}

void undo_channel_dir(ChannelDir& dir) {
    if (!dir.created || !dir.parent.valid()) return;
    dir.fd.reset();
    if (::unlinkat(dir.parent.get(), std::string(kImexChannelDirName).c_str(), AT_REMOVEDIR) == 0) {
        dir.created = false;
        dir.state = NodeState{};
    }
}

}  // namespace cumemctl::imex
