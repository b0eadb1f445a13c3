#include "util/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <utility>

#include <fmt/format.h>

#include "base/error.hpp"
#include "util/trusted_file.hpp"
#include "util/unique_fd.hpp"

namespace cumemctl {
namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path, int error) {
    const ExitCode code = error == EACCES || error == EPERM || error == EROFS ? ExitCode::permission : ExitCode::failed;
    throw Error(code, fmt::format("cannot {} {}: {}", what, path, std::strerror(error)),
                code == ExitCode::permission          ? "run it as a user who may write there (root for /var/lib)"
                : error == ENOENT || error == ENOTDIR ? "give a file in a folder that exists"
                                                      : "check that the file system has room and is writable");
}

// A path's folder and its last name: "a/b/c" -> ("a/b", "c"), "c" -> (".", "c"), "/c" -> ("/", "c").
std::pair<std::string, std::string> folder_and_name(const std::string& path) {
    const auto slash = path.rfind('/');
    if (slash == std::string::npos) return {".", path};
    return {path.substr(0, slash == 0 ? 1 : slash), path.substr(slash + 1)};
}

// The folder `dir` (of `path`), opened once (open_folder_to_write); made (mode 0755) in its own opened
// parent when it is missing and `missing` says so.
UniqueFd open_folder(const std::string& dir, const std::string& path, MissingFolder missing) {
    CheckedOpen folder = open_folder_to_write(dir);
    if (folder.fd.valid()) return std::move(folder.fd);
    if (folder.error != ENOENT || missing == MissingFolder::refuse) {
        if (folder.error == ENOENT) fail("write", path + " (no folder " + dir + ")", folder.error);
        fail("write", path, folder.error);
    }
    std::string bare = dir;  // "state/" names the folder "state"
    while (bare.size() > 1 && bare.back() == '/') bare.pop_back();
    const auto [parent, leaf] = folder_and_name(bare);
    if (leaf.empty() || leaf == "." || leaf == "..") fail("make the folder", dir, EEXIST);
    const CheckedOpen above = open_folder_to_write(parent);
    if (!above.fd.valid()) fail("make the folder", dir, above.error);
    if (::mkdirat(above.fd.get(), leaf.c_str(), 0755) != 0 && errno != EEXIST) fail("make the folder", dir, errno);
    UniqueFd made(::openat(above.fd.get(), leaf.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!made.valid()) fail("make the folder", dir, errno);
    return made;
}

// A new dot file beside `base` in the folder, made there and nowhere else (O_EXCL|O_NOFOLLOW), mode 0600
// until it is written.
UniqueFd make_temporary(int folder, const std::string& base, const std::string& path, std::string& name) {
    static constexpr char kLetters[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    std::random_device random;
    std::uniform_int_distribution<std::size_t> pick(0, sizeof kLetters - 2);
    for (int attempt = 0; attempt < 100; ++attempt) {
        name = "." + base + ".";
        for (int i = 0; i < 6; ++i) name += kLetters[pick(random)];
        UniqueFd fd(::openat(folder, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
        if (fd.valid() || errno != EEXIST) {
            if (!fd.valid()) fail("write", path, errno);
            return fd;
        }
    }
    fail("write", path, EEXIST);
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& text, unsigned mode, MissingFolder missing) {
    const auto [dir, base] = folder_and_name(path);
    if (base.empty() || base == "." || base == "..") fail("write", path, EISDIR);
    // Every call below works in this one folder, by its descriptor: the name is never looked up again.
    const UniqueFd folder = open_folder(dir, path, missing);
    // A dot file beside it: readers of a folder of such files skip dot files (node-feature-discovery's
    // features.d, node_exporter's textfile collector reads *.prom only), so a temporary file left by a
    // process killed mid-write is never read.
    std::string tmp;
    UniqueFd fd = make_temporary(folder.get(), base, path, tmp);
    const char* p = text.data();
    std::size_t left = text.size();
    int error = 0;
    while (left > 0 && error == 0) {
        const ssize_t n = ::write(fd.get(), p, left);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) error = errno;
        if (n > 0) p += n, left -= static_cast<std::size_t>(n);
    }
    if (error == 0 && ::fchmod(fd.get(), mode) != 0) error = errno;
    if (error == 0 && ::fsync(fd.get()) != 0) error = errno;
    fd.reset();
    if (error == 0 && ::renameat(folder.get(), tmp.c_str(), folder.get(), base.c_str()) != 0) error = errno;
    if (error != 0) {
        ::unlinkat(folder.get(), tmp.c_str(), 0);
        fail("write", path, error);
    }
    // The rename itself on disk too (a crash after it keeps the new file).
    if (const UniqueFd d(::openat(folder.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)); d.valid()) ::fsync(d.get());
}

}  // namespace cumemctl
