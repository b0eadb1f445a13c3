// ipc::Process: the child sees exactly the descriptors passed, the environment asked for, is killed
// and reaped when its owner goes, and a wait gives up at its timeout.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "ipc/process.hpp"
#include "base/error.hpp"
#include "util/unix_socket.hpp"

using namespace cumemctl;
using namespace std::chrono_literals;

namespace {

// The descriptor numbers process `pid` has open, from /proc.
std::set<int> open_fds_of(pid_t pid) {
    std::set<int> fds;
    for (const auto& e : std::filesystem::directory_iterator(fmt::format("/proc/{}/fd", pid))) {
        fds.insert(std::stoi(e.path().filename().string()));
    }
    return fds;
}

// The descriptors of `pid` once its start-up is over: /bin/sleep opens and closes the locale archive
// as it starts, which /proc can catch if it is read at that moment. A descriptor that crossed from the
// parent stays, so waiting for the set to settle hides no leak.
std::set<int> settled_fds_of(pid_t pid, const std::set<int>& expected) {
    std::set<int> fds = open_fds_of(pid);
    for (int i = 0; i < 200 && fds != expected; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        fds = open_fds_of(pid);
    }
    return fds;
}

std::string link_of(const std::string& path) {
    std::error_code ec;
    return std::filesystem::read_symlink(path, ec).string();
}

ipc::Process sleeper(int pass_fd = -1) {
    ipc::SpawnRequest r;
    r.executable = "/bin/sleep";
    r.args = {"30"};
    r.pass_fd = pass_fd;
    return ipc::Process::spawn(r);
}

}  // namespace

TEST_CASE("a child sees exactly stdin, stdout, stderr and the passed socket at 3") {
    auto [mine, theirs] = socket_pair();
    // A descriptor without close-on-exec must not cross either.
    const UniqueFd leaky(::open("/dev/null", O_RDONLY));
    REQUIRE(leaky.valid());
    ipc::Process child = sleeper(theirs.get());
    CHECK(settled_fds_of(child.pid(), {0, 1, 2, 3}) == std::set<int>{0, 1, 2, 3});
    CHECK(link_of(fmt::format("/proc/{}/fd/3", child.pid())).rfind("socket:", 0) == 0);
    CHECK(link_of(fmt::format("/proc/{}/fd/0", child.pid())) == "/dev/null");
    // stdout is our stderr, so that our own stdout stays one document.
    CHECK(link_of(fmt::format("/proc/{}/fd/1", child.pid())) == link_of("/proc/self/fd/2"));
    ipc::Process plain = sleeper();
    CHECK(settled_fds_of(plain.pid(), {0, 1, 2}) == std::set<int>{0, 1, 2});
}

TEST_CASE("a child gets the environment with the variables asked for set or replaced") {
    ::setenv("CUMEMCTL_IPC_TEST_KEEP", "kept", 1);
    ::setenv("CUMEMCTL_IPC_TEST_REPLACE", "old", 1);
    auto [mine, theirs] = socket_pair();
    ipc::SpawnRequest r;
    r.executable = "/bin/sh";
    r.args = {"-c",
              "printf '%s,%s,%s' \"$CUMEMCTL_IPC_TEST_KEEP\" \"$CUMEMCTL_IPC_TEST_REPLACE\" "
              "\"$CUDA_VISIBLE_DEVICES\" >&3"};
    r.env = {{"CUMEMCTL_IPC_TEST_REPLACE", "new"}, {"CUDA_VISIBLE_DEVICES", "1"}};
    r.pass_fd = theirs.get();
    ipc::Process child = ipc::Process::spawn(r);
    theirs.reset();
    CHECK(receive_message(mine.get(), 5000ms).bytes == "kept,new,1");
    const auto status = child.wait(5000ms);
    REQUIRE(status.has_value());
    CHECK(ipc::exit_code_of(*status) == 0);
    CHECK(ipc::describe_wait_status(*status) == "exited with status 0");
    ::unsetenv("CUMEMCTL_IPC_TEST_KEEP");
    ::unsetenv("CUMEMCTL_IPC_TEST_REPLACE");
}

TEST_CASE("environment_with replaces a variable once and appends new ones") {
    const char* env[] = {"A=1", "B=2", "C=3", nullptr};
    CHECK(ipc::environment_with(env, {{"B", "x"}, {"D", "4"}}) == std::vector<std::string>{"A=1", "C=3", "B=x", "D=4"});
    CHECK(ipc::environment_with(env, {}).size() == 3);
}

TEST_CASE("a child still running when its owner goes is killed and reaped") {
    pid_t pid = -1;
    {
        ipc::Process child = sleeper();
        pid = child.pid();
        CHECK(child.running());
        CHECK(::kill(pid, 0) == 0);
    }
    // Reaped: not even a zombie is left.
    CHECK(::kill(pid, 0) == -1);
    CHECK(errno == ESRCH);
}

TEST_CASE("a wait gives up at its timeout; the child can then be killed") {
    ipc::Process child = sleeper();
    const auto start = std::chrono::steady_clock::now();
    CHECK_FALSE(child.wait(50ms).has_value());
    CHECK(std::chrono::steady_clock::now() - start >= 50ms);
    const int status = child.kill_and_wait();
    CHECK(ipc::exit_code_of(status) == 128 + SIGKILL);
    CHECK(ipc::describe_wait_status(status).rfind("killed by signal 9", 0) == 0);
    CHECK_FALSE(child.running());
    CHECK(child.kill_and_wait() == -1);
}

TEST_CASE("an exit status comes back, and a program that cannot start is an error") {
    ipc::SpawnRequest r;
    r.executable = "/bin/sh";
    r.args = {"-c", "exit 3"};
    ipc::Process child = ipc::Process::spawn(r);
    const auto status = child.wait(5000ms);
    REQUIRE(status.has_value());
    CHECK(ipc::exit_code_of(*status) == 3);
    r.executable = "/nonexistent/cumemctl";
    CHECK_THROWS_WITH_AS(ipc::Process::spawn(r), doctest::Contains("cannot start a second process"), Error);
}

TEST_CASE("ipc::describe says a timeout in seconds") {
    CHECK(ipc::describe(ipc::Timeout{20000}) == "20 s");
    CHECK(ipc::describe(ipc::Timeout{500}) == "0.5 s");
}

TEST_CASE("children started at once from several threads (doctor's per-device threads) get only their own socket") {
    // Each thread holds its own "exported" descriptor, one of them without close-on-exec as a driver's
    // export might be, and starts a child with its own socket: no child may see another thread's.
    constexpr int kThreads = 4;
    std::vector<std::set<int>> seen(kThreads);
    std::vector<std::string> sockets(kThreads), passed(kThreads);
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i) {
        threads.emplace_back([&, i] {
            auto [mine, theirs] = socket_pair();
            const UniqueFd exported(::open("/dev/null", i % 2 == 0 ? O_RDONLY : O_RDONLY | O_CLOEXEC));
            ipc::Process child = sleeper(theirs.get());
            passed[i] = link_of(fmt::format("/proc/self/fd/{}", theirs.get()));
            seen[i] = settled_fds_of(child.pid(), {0, 1, 2, 3});
            sockets[i] = link_of(fmt::format("/proc/{}/fd/3", child.pid()));
        });
    }
    for (auto& t : threads) t.join();
    for (int i = 0; i < kThreads; ++i) {
        CHECK(seen[i] == std::set<int>{0, 1, 2, 3});
        CHECK(sockets[i] == passed[i]);
    }
}
