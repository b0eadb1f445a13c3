// ipc::spawn_connected: the child gets its end of a socket at 3, this process keeps only its own end,
// and dropping the child closes the socket before it is stopped and reaped.
#include <doctest/doctest.h>
#include <signal.h>

#include <cerrno>
#include <filesystem>

#include "base/error.hpp"
#include "ipc/child.hpp"
#include "util/unix_socket.hpp"

using namespace cumemctl;
using namespace std::chrono_literals;

namespace {

int open_fd_count() {
    int n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
    return n;
}

// A child that says "ready" on its socket, then reads it until it closes, and exits 7.
ipc::SpawnRequest echo_child() {
    ipc::SpawnRequest r;
    r.executable = "/bin/sh";
    r.args = {"-c", "printf ready >&3; cat <&3 >/dev/null; exit 7"};
    return r;
}

}  // namespace

TEST_CASE("a connected child talks over its socket at 3 and this process keeps only its own end") {
    const int before = open_fd_count();
    {
        ipc::Child child = ipc::spawn_connected(echo_child());
        CHECK(child.process.running());
        CHECK(child.socket.valid());
        // One more descriptor here: our end; the child's end was closed at once.
        CHECK(open_fd_count() == before + 1);
        CHECK(receive_message(child.socket.get(), 5000ms).bytes == "ready");
        // Our end closed: the child sees its parent gone and ends on its own, with its own status.
        child.socket.reset();
        const auto status = child.process.wait(5000ms);
        REQUIRE(status.has_value());
        CHECK(ipc::exit_code_of(*status) == 7);
    }
    CHECK(open_fd_count() == before);
}

TEST_CASE("a connected child dropped unused is stopped and reaped, and nothing stays open") {
    const int before = open_fd_count();
    pid_t pid = -1;
    {
        ipc::Child child = ipc::spawn_connected(echo_child());
        pid = child.process.pid();
        CHECK(receive_message(child.socket.get(), 5000ms).bytes == "ready");
    }
    CHECK(::kill(pid, 0) == -1);
    CHECK(errno == ESRCH);
    CHECK(open_fd_count() == before);
}

TEST_CASE("a connected child that cannot start leaves no socket open") {
    const int before = open_fd_count();
    ipc::SpawnRequest r;
    r.executable = "/nonexistent/cumemctl";
    CHECK_THROWS_WITH_AS(ipc::spawn_connected(r), doctest::Contains("cannot start a second process"), Error);
    CHECK(open_fd_count() == before);
}
