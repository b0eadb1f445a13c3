// The rendezvous folder of fabric-matrix: a folder every rank sees (a shared file system, or a private
// temporary folder on one node), which is untrusted input. It is opened without following a link and
// refused when others may write it without the sticky bit, or when it is another user's; a file is
// published atomically (written 0600 under a temporary name with O_EXCL and no following of links,
// then linked to its name, which must not exist yet); a file is read size-bounded, only when it is a
// regular file of this user that no one else may write.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "util/unique_fd.hpp"

namespace cumemctl::matrix {

// What reading one file of the folder found: nothing yet, its content, or why it cannot be used.
struct FileRead {
    bool present = false;
    std::string content;  // when present and usable
    std::string refusal;  // when present but refused: "is a symbolic link", "is 9000000 bytes, more than ..."
    bool usable() const { return present && refusal.empty(); }
};

// The folder, opened once; every file operation is relative to it.
class RendezvousDir {
public:
    // Opens `path` (a directory, not a link). Throws Error: usage when it does not exist or is no
    // directory, permission when group or others may write it without the sticky bit.
    static RendezvousDir open(const std::string& path);
    // Makes a private folder (0700) under $TMPDIR or /tmp and opens it; remove_all() takes it away.
    static RendezvousDir make_private();

    const std::string& path() const { return path_; }

    // Publishes `content` as `name`: written 0600 to a temporary name (O_EXCL, O_NOFOLLOW), then
    // linked to `name`, so that a reader sees all of it or nothing. Throws Error (failed) when `name`
    // exists already or the folder refuses the write.
    void publish(const std::string& name, const std::string& content) const;
    // Reads `name`, at most `max_bytes`; never throws for what the file is (see FileRead).
    FileRead read(const std::string& name, std::size_t max_bytes) const;
    // Whether `name` exists (as anything).
    bool exists(const std::string& name) const;
    // Removes `name`; a file that is not there is no error. Never throws.
    void remove(const std::string& name) const noexcept;
    // The names in the folder (without . and ..).
    std::vector<std::string> names() const;
    // Removes every entry and the folder itself (a private folder). Never throws.
    void remove_all() noexcept;

private:
    RendezvousDir(std::string path, UniqueFd fd) : path_(std::move(path)), fd_(std::move(fd)) {}
    std::string path_;
    UniqueFd fd_;
};

// Why a folder with this mode and owner may not serve as a rendezvous folder, or nullopt: group or
// others may write it and the sticky bit is not set, or it belongs to a user other than root and `me`
// (its owner may rename any file in it, sticky or not: anyone could replace a rank's file).
std::optional<std::string> unsafe_folder_reason(mode_t mode, uid_t owner, uid_t me);

}  // namespace cumemctl::matrix
