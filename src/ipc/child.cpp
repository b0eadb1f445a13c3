#include "ipc/child.hpp"

#include "util/unix_socket.hpp"

namespace cumemctl::ipc {

Child spawn_connected(SpawnRequest request) {
    auto [mine, theirs] = socket_pair();
    request.pass_fd = theirs.get();
    Process process = Process::spawn(request);
    theirs.reset();
    return Child{std::move(process), std::move(mine)};
}

}  // namespace cumemctl::ipc
