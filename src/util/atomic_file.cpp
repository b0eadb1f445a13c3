#include "util/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "base/error.hpp"
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

}  // namespace

void write_file_atomically(const std::string& path, const std::string& text, unsigned mode, MissingFolder missing) {
    const auto slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
    struct stat st {};
    if (missing == MissingFolder::refuse && ::stat(dir.c_str(), &st) != 0)
        fail("write", path + " (no folder " + dir + ")", errno);
    if (missing == MissingFolder::make && ::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
        fail("make the folder", dir, errno);
    }
    // A dot file beside it: readers of a folder of such files skip dot files (node-feature-discovery's
    // features.d, node_exporter's textfile collector reads *.prom only), so a temporary file left by a
    // process killed mid-write is never read.
    const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    std::string tmp = (slash == std::string::npos ? std::string() : path.substr(0, slash + 1)) + "." + base + ".XXXXXX";
    std::vector<char> name(tmp.begin(), tmp.end());
    name.push_back('\0');
    UniqueFd fd(::mkostemp(name.data(), O_CLOEXEC));
    if (!fd.valid()) fail("write", path, errno);
    tmp = name.data();
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
    if (error == 0 && ::rename(tmp.c_str(), path.c_str()) != 0) error = errno;
    if (error != 0) {
        ::unlink(tmp.c_str());
        fail("write", path, error);
    }
    // The rename itself on disk too (a crash after it keeps the new file).
    if (const UniqueFd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)); d.valid()) ::fsync(d.get());
}

}  // namespace cumemctl
