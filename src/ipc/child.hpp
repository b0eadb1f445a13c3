// A second process with a socket to it: the one way to start a child that talks back. A connected
// pair of Unix sockets is made, the child gets its end as kChildSocketFd, and this process closes its
// copy of that end at once, so that the child's exit (or a closed end) is seen as a closed peer.
// The socket is closed before the child is stopped (declaration order), so that a child waiting for a
// message sees its parent gone and ends on its own.
#pragma once

#include "ipc/process.hpp"
#include "util/unique_fd.hpp"

namespace cumemctl::ipc {

struct Child {
    Process process;
    UniqueFd socket;  // this process's end
};

// Starts `request` with the child's end of a new socket pair (request.pass_fd is replaced). Throws
// Error (failed) when the sockets or the process cannot be made; nothing is left open then.
Child spawn_connected(SpawnRequest request);

}  // namespace cumemctl::ipc
