#include "matrix/rendezvous_dir.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "base/error.hpp"

namespace cumemctl::matrix {
namespace {

std::string errno_text(int e) {
    return std::strerror(e);
}

// Writes all of `content` to `fd`; false with errno set when the write fails.
bool write_all(int fd, const std::string& content) {
    std::size_t done = 0;
    while (done < content.size()) {
        const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += static_cast<std::size_t>(n);
    }
    return true;
}

}  // namespace

std::optional<std::string> unsafe_folder_reason(mode_t mode, uid_t owner, uid_t me) {
    if (owner != 0 && owner != me) {
        return fmt::format("it belongs to user id {}, who may rename or replace any rank's file in it", owner);
    }
    if ((mode & (S_IWGRP | S_IWOTH)) != 0 && (mode & S_ISVTX) == 0) {
        return fmt::format(
            "its mode {:04o} lets {} write it without the sticky bit, so anyone could replace a "
            "rank's file",
            mode & 07777, (mode & S_IWOTH) != 0 ? "others" : "the group");
    }
    return std::nullopt;
}

RendezvousDir RendezvousDir::open(const std::string& path) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid()) {
        const int e = errno;
        struct stat link {};
        const bool is_link = e == ELOOP || (lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode));
        throw Error(Problem{.exit_code = ExitCode::usage,
                            .message = fmt::format("cannot use {} as the rendezvous folder: {}", path,
                                                   is_link ? "it is a symbolic link" : errno_text(e)),
                            .remedy = "give a folder that every rank sees, e.g. on a shared file system"});
    }
    struct stat st {};
    if (fstat(fd.get(), &st) != 0) throw Error(ExitCode::failed, fmt::format("fstat {}: {}", path, errno_text(errno)));
    if (auto why = unsafe_folder_reason(st.st_mode, st.st_uid, geteuid())) {
        throw Error(Problem{.exit_code = ExitCode::permission,
                            .message = fmt::format("refusing the rendezvous folder {}", path),
                            .cause = *why,
                            .remedy = fmt::format("use a folder of this user's or root's that only its owner can "
                                                  "write (chmod go-w {}), or one with the sticky bit (chmod +t {})",
                                                  path, path)});
    }
    return RendezvousDir(path, std::move(fd));
}

RendezvousDir RendezvousDir::make_private() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = fmt::format("{}/cumemctl-matrix-XXXXXX", tmp != nullptr && *tmp != '\0' ? tmp : "/tmp");
    if (mkdtemp(pattern.data()) == nullptr) {
        throw Error(ExitCode::failed, fmt::format("cannot make a temporary folder {}: {}", pattern, errno_text(errno)),
                    "check that $TMPDIR (or /tmp) exists and is writable");
    }
    return open(pattern);
}

void RendezvousDir::publish(const std::string& name, const std::string& content) const {
    const std::string tmp = fmt::format(".{}.{}.tmp", name, getpid());
    UniqueFd fd(::openat(fd_.get(), tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd.valid()) {
        throw Error(ExitCode::failed, fmt::format("cannot write {}/{}: {}", path_, tmp, errno_text(errno)),
                    "check that this user may write the rendezvous folder");
    }
    // The mode is 0600 whatever the umask.
    const bool written = fchmod(fd.get(), 0600) == 0 && write_all(fd.get(), content);
    const int write_errno = errno;
    fd.reset();
    if (!written) {
        unlinkat(fd_.get(), tmp.c_str(), 0);
        throw Error(ExitCode::failed, fmt::format("cannot write {}/{}: {}", path_, tmp, errno_text(write_errno)));
    }
    const int linked = linkat(fd_.get(), tmp.c_str(), fd_.get(), name.c_str(), 0);
    const int link_errno = errno;
    unlinkat(fd_.get(), tmp.c_str(), 0);
    if (linked != 0) {
        throw Error(Problem{
            .exit_code = ExitCode::failed,
            .message = fmt::format("cannot publish {}/{}: {}", path_, name, errno_text(link_errno)),
            .cause = link_errno == EEXIST ? "a file of that name is there already: another run with the same name, "
                                            "or one that did not clean up"
                                          : "",
            .remedy = link_errno == EEXIST ? "give each run its own name, or remove the old files" : ""});
    }
}

FileRead RendezvousDir::read(const std::string& name, std::size_t max_bytes) const {
    FileRead r;
    UniqueFd fd(::openat(fd_.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd.valid()) {
        const int e = errno;
        if (e == ENOENT) return r;
        r.present = true;
        r.refusal = e == ELOOP ? "is a symbolic link" : fmt::format("cannot be opened: {}", errno_text(e));
        return r;
    }
    r.present = true;
    struct stat st {};
    if (fstat(fd.get(), &st) != 0) {
        r.refusal = fmt::format("cannot be examined: {}", errno_text(errno));
    } else if (!S_ISREG(st.st_mode)) {
        r.refusal = "is not a regular file";
    } else if (st.st_uid != geteuid()) {
        r.refusal = fmt::format("belongs to user id {}, not to this user ({})", st.st_uid, geteuid());
    } else if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
        r.refusal = fmt::format("has mode {:04o}: others may write it", st.st_mode & 07777);
    } else if (static_cast<std::size_t>(st.st_size) > max_bytes) {
        r.refusal = fmt::format("is {} bytes, more than the {} such a file may have", st.st_size, max_bytes);
    }
    if (!r.refusal.empty()) return r;
    std::string content(max_bytes + 1, '\0');
    std::size_t got = 0;
    while (got < content.size()) {
        const ssize_t n = ::read(fd.get(), content.data() + got, content.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            r.refusal = fmt::format("cannot be read: {}", errno_text(errno));
            return r;
        }
        if (n == 0) break;
        got += static_cast<std::size_t>(n);
    }
    if (got > max_bytes) {
        r.refusal = fmt::format("grew past the {} bytes such a file may have", max_bytes);
        return r;
    }
    content.resize(got);
    r.content = std::move(content);
    return r;
}

bool RendezvousDir::exists(const std::string& name) const {
    struct stat st {};
    return fstatat(fd_.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
}

void RendezvousDir::remove(const std::string& name) const noexcept {
    unlinkat(fd_.get(), name.c_str(), 0);
}

std::vector<std::string> RendezvousDir::names() const {
    std::vector<std::string> out;
    const int copy = fcntl(fd_.get(), F_DUPFD_CLOEXEC, 0);
    if (copy < 0) return out;
    DIR* d = fdopendir(copy);
    if (d == nullptr) {
        ::close(copy);
        return out;
    }
    rewinddir(d);
    while (const dirent* e = readdir(d)) {
        const std::string n = e->d_name;
        if (n != "." && n != "..") out.push_back(n);
    }
    closedir(d);
    return out;
}

void RendezvousDir::remove_all() noexcept {
    if (!fd_.valid()) return;
    try {
        for (const auto& n : names()) unlinkat(fd_.get(), n.c_str(), 0);
    } catch (...) {
        // Lack of memory: what is left stays in the temporary folder.
    }
    fd_.reset();
    rmdir(path_.c_str());
}

}  // namespace cumemctl::matrix
