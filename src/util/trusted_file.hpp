// What root loads, runs or reads to decide what it makes is opened once: each folder on the way is
// looked at on its own descriptor, each symbolic link resolved here (never by the kernel), the file
// itself with fstat on the descriptor that is then loaded (dlopen of /proc/self/fd/N), run (the
// process runner's executable_fd) or read. Nothing is looked up by name a second time, so a name that
// another user swaps between the check and the use changes nothing.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

#include "util/file_mode.hpp"
#include "util/unique_fd.hpp"

namespace cumemctl {

// Whether this process is judged as root: root now, or holding a capability, or started so (a child of
// root's that dropped to a user, imex-setup --verify's, still writes to root's descriptors and answers
// to root). Every trust decision of root's asks this, never the effective user id alone.
bool judged_as_root();

// Whether a symbolic link may be on the way (each one resolved and judged here) or is refused.
enum class Links { follow, refuse };

// What an open found: the file's descriptor (open for reading, close-on-exec), or the errno why there
// is none (ENOENT where the name is missing in a folder that only root can add to, EACCES, ...), or
// where `check` was asked, the first file or folder that others can change.
struct CheckedOpen {
    UniqueFd fd;
    int error = 0;
    std::optional<UnsafePath> unsafe;
};

// What a walk judges on the way:
// - none: nothing (a user's own run);
// - links: only the links, each of which must be one that no user but root could have placed (in a
//   folder only root can change, or root's in a sticky folder): where root writes, so that the folder
//   it writes in is the one the path names;
// - everything: each folder and the file, for what root loads, runs or reads to decide what it makes.
enum class Check { none, links, everything };

// Opens `path` (relative to the working folder where it is not absolute) one component at a time from
// "/", with O_PATH|O_NOFOLLOW, a link's target walked in its place. With Check::everything, each folder
// must be root's and not writable by group or others, or root's and sticky (then each name in it must
// be root's too); the file must be a regular file, root's, not writable by group or others; a missing
// name in a folder that others can add to is unsafe. The regular file is then reopened for reading
// through its own descriptor.
// With `folder`, the path names a folder: it is checked as the folders above it (not sticky; it may be
// `folder_owner`'s too, a system account's such as munged's) and its O_PATH descriptor handed back.
CheckedOpen open_checked(const std::string& path, Check check, Links links = Links::follow, bool folder = false,
                         uid_t folder_owner = 0);

// Who wants the file, for the messages: "the driver library", and what else to do ("give --libcuda
// ... a library that only root can change").
struct TrustUse {
    std::string_view what;
    std::string instead;
    Links links = Links::follow;
};

// A file opened by open_trusted, or the reason it is missing.
struct TrustedFile {
    std::string path;  // as given
    UniqueFd fd;       // invalid when missing
    int error = 0;     // errno when missing or unreadable
    // "/proc/self/fd/N": the name through which the kernel reopens this very file.
    std::string fd_path() const;
};

// Whether `name` is a bare name (no '/'): the dynamic loader's search of the system's folders.
bool is_bare_name(std::string_view name);

// open_checked, checking when this process is judged as root. Throws Error (permission, exit 4) when others can
// change the file or a folder on the way, naming it and why; the remedy says how to make it root's or,
// `use.instead`, what else to do. A missing or unreadable file is not thrown: it is in `error`.
TrustedFile open_trusted(const std::string& path, const TrustUse& use);

// dlopen of a library chosen by name: a bare name through the dynamic loader as it is, a path through
// open_trusted's descriptor. The descriptor stays open while the process lives, so that its name
// /proc/self/fd/N never names another library to the loader. Null with `why` set when it cannot be
// loaded (dlerror's words, or the errno of a missing file); throws open_trusted's refusals.
void* load_library(const std::string& library, int flags, const TrustUse& use, std::string& why);

// The folder that a file is written in (write_file_atomically), as an O_PATH descriptor: open_checked
// with Check::links when this process is judged as root. Throws Error (permission, exit 4) naming a link that
// another user could have placed on the way; a missing or unreadable folder is in `error`.
CheckedOpen open_folder_to_write(const std::string& path);

// Reads the whole text of a file root decides by (/proc/devices, the driver's params): open_trusted,
// then read_text_file's limits and errors (exit 3 when missing, 4 when access is denied), `what`
// naming the setting.
std::string read_trusted_text(const std::string& path, const std::string& what, const std::string& remedy);

// The same for a file that may be absent or unreadable: nullopt then (absent now even where another user
// could make the name: the file is read once, now). Where root refuses it (open_trusted), nullopt too,
// with the refusal's words in `refused`.
std::optional<std::string> try_read_trusted_text(const std::string& path, std::string& refused);

}  // namespace cumemctl
