// A file descriptor that closes itself: the owner of every descriptor the core opens, until a directory
// stream (fdopendir) takes one over.
#pragma once

#include <unistd.h>

#include <utility>

namespace cumemctl {

// Owns one file descriptor (or none, -1) and closes it when destroyed or reset.
class UniqueFd {
public:
    UniqueFd() = default;
    explicit UniqueFd(int fd) : fd_(fd) {}
    UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    UniqueFd& operator=(UniqueFd&& other) noexcept {
        if (this != &other) reset(std::exchange(other.fd_, -1));
        return *this;
    }
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;
    ~UniqueFd() { reset(); }

    // The descriptor, still owned; -1 when there is none.
    int get() const { return fd_; }
    bool valid() const { return fd_ >= 0; }
    // Closes the current descriptor (if any) and owns `fd` instead.
    void reset(int fd = -1) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = fd;
    }

private:
    int fd_ = -1;
};

}  // namespace cumemctl
