#include "util/trusted_file.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <deque>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "base/error.hpp"
#include "util/mount_owner.hpp"
#include "util/text_file.hpp"

namespace cumemctl {
namespace {

constexpr int kMaxLinks = 40;  // as the kernel's MAXSYMLINKS

bool root_or_capable() noexcept {
    if (::geteuid() == 0) return true;
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
    // Where the kernel cannot say, the process is judged as root: the stricter rule.
    if (::syscall(SYS_capget, &header, data) != 0) return true;
    for (const auto& d : data) {
        if (d.effective != 0) return true;
    }
    return false;
}

// Read before main, before any change of credentials.
const bool kStartedAsRoot = root_or_capable();

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

// A folder reached on the way: its descriptor, its path as walked (for messages), what fstat said.
struct Folder {
    UniqueFd fd;
    std::string path;
    struct stat st {};
};

std::string child_path(const std::string& folder, const std::string& name) {
    return folder == "/" ? "/" + name : folder + "/" + name;
}

// The walk itself: a stack of open folders from "/" down, each checked on its descriptor.
class Walk {
public:
    Walk(Check check, Links links, bool folder, uid_t folder_owner)
        : check_(check), links_(links), folder_(folder), folder_owner_(folder_owner) {}

    CheckedOpen run(const std::string& path);

private:
    bool enter_root();
    // One component; false when the walk ends (result_ holds why).
    bool step(const std::string& name, bool last, std::deque<std::string>& todo);
    bool follow(const Folder& here, const std::string& name, UniqueFd link, std::deque<std::string>& todo);
    void finish(const Folder& here, const std::string& name, UniqueFd file, const struct stat& st);
    // Whether a name in folder `here` may be used: where others can add to it, only root's, once linked.
    bool in_folder_of_others(const Folder& here, const std::string& path, const struct stat& st);
    void unsafe(std::string path, std::string why) { result_.unsafe = UnsafePath{std::move(path), std::move(why)}; }
    bool all() const { return check_ == Check::everything; }

    Check check_;
    Links links_;
    bool folder_;
    uid_t folder_owner_;  // who besides root may own the folder that a walk for a folder ends at
    int links_seen_ = 0;
    std::vector<Folder> stack_;
    CheckedOpen result_;
};

bool Walk::in_folder_of_others(const Folder& here, const std::string& path, const struct stat& st) {
    if (!others_can_change(here.st, 0, false)) return true;
    if (st.st_uid != 0) {
        const char* kind = S_ISLNK(st.st_mode) ? "is a link of" : "belongs to";
        unsafe(path, fmt::format("{} uid {} in {}, a folder that others can add to", kind, st.st_uid, here.path));
        return false;
    }
    // A second name for root's file may have been made there by anyone (a hard link): the name is theirs.
    if (!S_ISDIR(st.st_mode) && st.st_nlink > 1) {
        unsafe(path, fmt::format("has {} hard links, in {}, a folder that others can add to: any user could have "
                                 "made this name for root's file",
                                 st.st_nlink, here.path));
        return false;
    }
    return true;
}

bool Walk::enter_root() {
    Folder root;
    root.fd.reset(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
    root.path = "/";
    if (!root.fd.valid() || ::fstat(root.fd.get(), &root.st) != 0) {
        result_.error = errno;
        return false;
    }
    if (all()) {
        if (auto why = others_can_change(root.st, 0, true)) {
            unsafe("/", *why);
            result_.unsafe->folder_mode = root.st.st_uid == 0;
            return false;
        }
        if (auto why = owners_unvouched(root.fd.get(), root.st)) {
            unsafe("/", *why);
            result_.unsafe->unvouched = true;
            return false;
        }
    }
    stack_.push_back(std::move(root));
    return true;
}

CheckedOpen Walk::run(const std::string& path) {
    std::string start = path;
    if (start.empty() || start[0] != '/') {
        char cwd[PATH_MAX] = {};
        if (::getcwd(cwd, sizeof cwd) == nullptr) {
            result_.error = errno;
            return std::move(result_);
        }
        start = std::string(cwd) + "/" + start;
    }
    if (!enter_root()) return std::move(result_);
    std::deque<std::string> todo = components(start);
    if (todo.empty()) todo.emplace_back(".");  // "/" itself
    while (!todo.empty()) {
        const std::string name = todo.front();
        todo.pop_front();
        if (!step(name, todo.empty(), todo)) break;
    }
    return std::move(result_);
}

bool Walk::step(const std::string& name, bool last, std::deque<std::string>& todo) {
    if (name == "." || name == "..") {
        if (name == ".." && stack_.size() > 1) stack_.pop_back();
        if (!last) return true;
        const Folder& folder = stack_.back();
        if (!folder_) {
            result_.error = EISDIR;
        } else if (auto why = all() ? others_can_change(folder.st, folder_owner_, false) : std::nullopt) {
            unsafe(folder.path, *why);
            result_.unsafe->folder_mode = folder.st.st_uid == 0;
        } else {
            result_.fd.reset(::openat(folder.fd.get(), ".", O_PATH | O_DIRECTORY | O_CLOEXEC));
            if (!result_.fd.valid()) result_.error = errno;
        }
        return false;
    }
    const Folder& here = stack_.back();
    const std::string path = child_path(here.path, name);
    UniqueFd fd(::openat(here.fd.get(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (!fd.valid() || ::fstat(fd.get(), &st) != 0) {
        result_.error = errno;
        // Another user could make the name before the loader or a later run looks: never wait for that.
        if (all() && errno == ENOENT) {
            if (auto why = others_can_change(here.st, 0, false)) {
                unsafe(path, fmt::format("does not exist, and {} {}: another user could make it", here.path, *why));
                result_.unsafe->missing = true;
            }
        }
        return false;
    }
    if (all()) {
        if (auto why = owners_unvouched(fd.get(), st)) {
            unsafe(path, *why);
            result_.unsafe->unvouched = true;
            return false;
        }
    }
    if (S_ISLNK(st.st_mode)) return follow(here, name, std::move(fd), todo);
    if (all() && !in_folder_of_others(here, path, st)) return false;
    if (S_ISDIR(st.st_mode) && (!last || folder_)) {
        if (all()) {
            if (auto why = others_can_change(st, last ? folder_owner_ : 0, !last)) {
                unsafe(path, *why);
                result_.unsafe->folder_mode = st.st_uid == 0;
                return false;
            }
        }
        if (last) {
            result_.fd = std::move(fd);
            return false;
        }
        stack_.push_back(Folder{std::move(fd), path, st});
        return true;
    }
    if (!last || folder_) {
        result_.error = ENOTDIR;
        return false;
    }
    finish(here, name, std::move(fd), st);
    return false;
}

bool Walk::follow(const Folder& here, const std::string& name, UniqueFd link, std::deque<std::string>& todo) {
    const std::string path = child_path(here.path, name);
    struct stat st {};
    ::fstat(link.get(), &st);
    if (links_ == Links::refuse) {
        if (check_ != Check::none) {
            unsafe(path, "is a symbolic link, and none is allowed here");
        } else {
            result_.error = ELOOP;
        }
        return false;
    }
    // A link in another user's folder, or one others can write without the sticky bit, is theirs to
    // point anywhere (they may rename root's own links there); in a sticky folder, only root's.
    if (check_ != Check::none) {
        if (auto why = others_can_change(here.st, 0, true)) {
            unsafe(path, fmt::format("is a link in {}, which {}: whoever can change that folder chooses where "
                                     "it leads",
                                     here.path, *why));
            return false;
        }
        if (!in_folder_of_others(here, path, st)) return false;
    }
    // A folder that is root's now may have been another user's when they made the link.
    if (check_ != Check::none && st.st_uid != 0) {
        unsafe(path, fmt::format("is a link of uid {}: root follows only root's links", st.st_uid));
        return false;
    }
    // Where only links are judged, a file system's word for who owns the link must be believable too.
    if (check_ == Check::links) {
        if (auto why = owners_unvouched(link.get(), st)) {
            unsafe(path, *why);
            result_.unsafe->unvouched = true;
            return false;
        }
    }
    // A loop, or a chain longer than the kernel follows: not a matter of trust, the kernel's own error.
    if (++links_seen_ > kMaxLinks) {
        result_.error = ELOOP;
        return false;
    }
    std::string target(PATH_MAX, '\0');
    const ssize_t n = ::readlinkat(link.get(), "", target.data(), target.size());
    if (n <= 0 || static_cast<std::size_t>(n) >= target.size()) {
        result_.error = n < 0 ? errno : (n == 0 ? ENOENT : ENAMETOOLONG);
        return false;
    }
    target.resize(static_cast<std::size_t>(n));
    if (target[0] == '/') stack_.resize(1);
    const std::deque<std::string> more = components(target);
    todo.insert(todo.begin(), more.begin(), more.end());
    if (todo.empty()) todo.emplace_back(".");  // a link to "/": a folder, not a file
    return true;
}

void Walk::finish(const Folder& here, const std::string& name, UniqueFd file, const struct stat& st) {
    const std::string path = child_path(here.path, name);
    if (!all() && !S_ISREG(st.st_mode)) {
        result_.error = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
        return;
    }
    if (all()) {
        if (!S_ISREG(st.st_mode)) {
            unsafe(path, S_ISDIR(st.st_mode) ? "is a folder, not a file" : "is not a regular file");
            return;
        }
        if (auto why = others_can_change(st, 0, false)) {
            unsafe(path, *why);
            return;
        }
    }
    // The very file looked at, reopened for reading through its own descriptor: no name is looked up again.
    const std::string self = fmt::format("/proc/self/fd/{}", file.get());
    result_.fd.reset(::open(self.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
    if (!result_.fd.valid()) result_.error = errno;
}

}  // namespace

bool judged_as_root() {
    return kStartedAsRoot || root_or_capable();
}

CheckedOpen open_checked(const std::string& path, Check check, Links links, bool folder, uid_t folder_owner) {
    return Walk(check, links, folder, folder_owner).run(path);
}

std::string TrustedFile::fd_path() const {
    return fmt::format("/proc/self/fd/{}", fd.get());
}

bool is_bare_name(std::string_view name) {
    return name.find('/') == std::string_view::npos;
}

namespace {

// Root's refusal of `path`, which `use` wanted, because of `u`.
Problem refusal(const std::string& path, const TrustUse& use, const UnsafePath& u) {
    return Problem{.exit_code = ExitCode::permission,
                   .message = fmt::format("refusing {} {}: {} {}", use.what, path, u.path, u.why),
                   .cause = "as root, cumemctl loads, runs and reads nothing that a user other than root could change",
                   .remedy = u.missing ? fmt::format("put it in a folder that only root can change, or {}", use.instead)
                             : u.unvouched
                                 ? fmt::format("put it on a file system that root mounted, or {}", use.instead)
                             : u.folder_mode ? fmt::format("chmod go-w {0}, or {1}", u.path, use.instead)
                                             : fmt::format("copy it as root's into a folder that only root can change "
                                                           "(install -o root -g root -m 0644 {0} DIR/; a chown would "
                                                           "keep what another user made), or {1}",
                                                           path, use.instead)};
}

TrustUse reading(const std::string& what) {
    return TrustUse{what, fmt::format("point {} at a file that only root can change", what), Links::follow};
}

}  // namespace

TrustedFile open_trusted(const std::string& path, const TrustUse& use) {
    CheckedOpen opened = open_checked(path, judged_as_root() ? Check::everything : Check::none, use.links);
    if (opened.unsafe) throw Error(refusal(path, use, *opened.unsafe));
    return TrustedFile{path, std::move(opened.fd), opened.error};
}

void* load_library(const std::string& library, int flags, const TrustUse& use, std::string& why) {
    auto loader_error = [&] {
        const char* e = ::dlerror();
        why = e != nullptr ? e : "unknown error";
    };
    if (is_bare_name(library)) {
        void* handle = ::dlopen(library.c_str(), flags);
        if (handle == nullptr) loader_error();
        return handle;
    }
    TrustedFile file = open_trusted(library, use);
    if (!file.fd.valid()) {
        why = fmt::format("{}: {}", library, std::strerror(file.error));
        return nullptr;
    }
    const std::string fd_path = file.fd_path();
    void* handle = ::dlopen(fd_path.c_str(), flags);
    if (handle == nullptr) {
        loader_error();
        // The loader names the descriptor; the person chose the name.
        for (std::size_t at = why.find(fd_path); at != std::string::npos; at = why.find(fd_path, at + library.size())) {
            why.replace(at, fd_path.size(), library);
        }
        return nullptr;
    }
    // Kept open: the loader knows the library by this name, which must not come to mean another file.
    static std::mutex kept_mutex;
    static std::vector<UniqueFd> kept;
    const std::lock_guard<std::mutex> lock(kept_mutex);
    kept.push_back(std::move(file.fd));
    return handle;
}

CheckedOpen open_folder_to_write(const std::string& path) {
    CheckedOpen opened = open_checked(path, judged_as_root() ? Check::links : Check::none, Links::follow, true);
    if (!opened.unsafe) return opened;
    const UnsafePath& u = *opened.unsafe;
    throw Error(Problem{
        .exit_code = ExitCode::permission,
        .message = fmt::format("refusing to write in {}: {} {}", path, u.path, u.why),
        .cause = "as root, cumemctl writes only in the folder a path names: no link on the way that another user "
                 "could have placed or changed",
        .remedy = u.unvouched ? "write on a file system that root mounted"
                              : "name the folder by a path without that link (its target, if that is where it "
                                "should go)"});
}

std::string read_trusted_text(const std::string& path, const std::string& what, const std::string& remedy) {
    TrustedFile file = open_trusted(path, reading(what));
    if (!file.fd.valid()) throw text_file_error(path, what, remedy, file.error);
    return read_text_fd(file.fd.get(), path, what, remedy);
}

std::optional<std::string> try_read_trusted_text(const std::string& path, std::string& refused) {
    const CheckedOpen opened = open_checked(path, judged_as_root() ? Check::everything : Check::none);
    // Read once, through this descriptor: a name that is missing now reads as missing, whoever could make it later.
    if (opened.unsafe && !opened.unsafe->missing) {
        refused = refusal(path, reading("the file"), *opened.unsafe).message;
        return std::nullopt;
    }
    if (!opened.fd.valid()) return std::nullopt;
    try {
        return read_text_fd(opened.fd.get(), path, path, "");
    } catch (const Error&) {
        return std::nullopt;
    }
}

}  // namespace cumemctl
