#include "ipc/child.hpp"

#include "util/unix_socket.hpp"

namespace cumemctl::ipc {

Child spawn_connected(SpawnRequest request) {
    std::pair<UniqueFd, UniqueFd> ends = socket_pair();  // ours, the child's
    request.pass_fd = ends.second.get();
    Process process = Process::spawn(request);
    ends.second.reset();
    return Child{std::move(process), std::move(ends.first)};
}

}  // namespace cumemctl::ipc
