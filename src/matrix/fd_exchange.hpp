// posix-fd handles in a --local run: a descriptor cannot be written into a folder, so each rank hands
// its exported descriptor to the coordinator (the cumemctl process that started the ranks) over its
// socket (ipc envelopes, the descriptor alongside with SCM_RIGHTS), and the coordinator hands every
// rank the other ranks' descriptors the same way.
#pragma once

#include <map>
#include <optional>
#include <vector>

#include "base/error.hpp"
#include "ipc/timeout.hpp"
#include "util/unique_fd.hpp"

namespace cumemctl::matrix {

// A rank's side: one socket to the coordinator.
class DescriptorExchange {
public:
    explicit DescriptorExchange(int socket) : socket_(socket) {}
    // Hands this rank's descriptor over (`fd`, still owned by the caller), or -1 with the problem that
    // left it without one. Throws Error (failed) when the coordinator has gone.
    void offer(int rank, int fd, const std::optional<Problem>& problem) const;
    // The other ranks' descriptors by rank (a rank without one is absent), waiting at most `timeout`
    // for all `count` - 1 of them. Throws Error (failed) when the coordinator has gone or is late.
    std::map<int, UniqueFd> collect(int count, ipc::Timeout timeout) const;
    int socket() const { return socket_; }
    // Whether offer() was called (a rank that fails before its offer still makes one).
    bool offered() const { return offered_; }

private:
    int socket_;
    mutable bool offered_ = false;
};

// The coordinator's side: receives each rank's offer on its socket (rank i on sockets[i]), then sends
// every rank the others'. Waits at most `timeout` in all; a rank that offers nothing in time is
// passed on as having no descriptor. Throws Error (failed) when a socket fails.
void broker_descriptors(const std::vector<int>& sockets, ipc::Timeout timeout);

}  // namespace cumemctl::matrix
