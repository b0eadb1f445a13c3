#include "util/unix_socket.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "base/error.hpp"
#include "base/interrupt.hpp"

namespace cumemctl {
namespace {

// The largest message either side sends: a report of a few kilobytes.
constexpr std::size_t kMaxMessage = 1 << 20;
// How long one poll waits before looking for a stop request again.
constexpr std::int64_t kPollSliceMs = 100;

[[noreturn]] void fail(const char* what, int err) {
    throw Error(ExitCode::failed, fmt::format("{} failed: {}", what, std::strerror(err)));
}

}  // namespace

std::pair<UniqueFd, UniqueFd> socket_pair() {
    int fds[2] = {-1, -1};
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0) fail("socketpair", errno);
    return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

void send_message(int socket, std::string_view bytes, int fd) {
    iovec iov{const_cast<char*>(bytes.data()), bytes.size()};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    if (fd >= 0) {
        msg.msg_control = control;
        msg.msg_controllen = sizeof control;
        cmsghdr* c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
    }
    ssize_t n = -1;
    do {
        n = sendmsg(socket, &msg, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    if (n < 0) fail("sendmsg", errno);
}

MessageTimeout::MessageTimeout(std::chrono::milliseconds waited)
    : Error(ExitCode::failed, fmt::format("no message within {:g} s", static_cast<double>(waited.count()) / 1000.0)) {}

void end_sending(int socket) noexcept {
    shutdown(socket, SHUT_WR);
}

std::optional<Message> receive_message_or_end(int socket, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    pollfd p{socket, POLLIN, 0};
    int ready = 0;
    // In slices, so that a stop request (SIGINT, SIGTERM) ends the wait even when another thread took
    // the signal; an EINTR ends a slice at once.
    while (true) {
        check_interrupted();
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        const bool last = left.count() <= kPollSliceMs;
        ready = poll(&p, 1, static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, kPollSliceMs)));
        if (ready < 0 && errno == EINTR) continue;
        if (ready != 0 || last) break;
    }
    if (ready < 0) fail("poll", errno);
    if (ready == 0) throw MessageTimeout(timeout);
    std::vector<char> buffer(kMaxMessage);
    iovec iov{buffer.data(), buffer.size()};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t n = -1;
    do {
        n = recvmsg(socket, &msg, MSG_CMSG_CLOEXEC);
    } while (n < 0 && errno == EINTR);
    if (n < 0) fail("recvmsg", errno);
    Message m;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            int fd = -1;
            std::memcpy(&fd, CMSG_DATA(c), sizeof(int));
            m.fd.reset(fd);
        }
    }
    if (n == 0) return std::nullopt;
    if (msg.msg_flags & MSG_TRUNC) throw Error(ExitCode::failed, "a message was larger than expected");
    m.bytes.assign(buffer.data(), static_cast<std::size_t>(n));
    return m;
}

Message receive_message(int socket, std::chrono::milliseconds timeout) {
    std::optional<Message> m = receive_message_or_end(socket, timeout);
    if (!m) throw Error(ExitCode::failed, "the other process closed the connection without a message");
    return std::move(*m);
}

}  // namespace cumemctl
