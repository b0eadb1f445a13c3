#include "util/child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "base/error.hpp"
#include "util/unique_fd.hpp"

namespace cumemctl {
namespace {

constexpr const char* kSelf = "/proc/self/exe";

// posix_spawn file actions, destroyed with the object.
struct FileActions {
    posix_spawn_file_actions_t actions;
    FileActions() { posix_spawn_file_actions_init(&actions); }
    ~FileActions() { posix_spawn_file_actions_destroy(&actions); }
    FileActions(const FileActions&) = delete;
    FileActions& operator=(const FileActions&) = delete;
};

}  // namespace

ChildProcess ChildProcess::spawn_self(const std::vector<std::string>& args, int pass_fd, int child_fd) {
    // dup2 onto the same number would keep close-on-exec: hand over a copy with another number.
    UniqueFd moved(fcntl(pass_fd, F_DUPFD_CLOEXEC, child_fd + 1));
    if (!moved.valid()) throw Error(ExitCode::failed, fmt::format("fcntl: {}", std::strerror(errno)));
    FileActions fa;
    posix_spawn_file_actions_addopen(&fa.actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa.actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa.actions, moved.get(), child_fd);
    std::vector<std::string> argv_text{"cumemctl"};
    argv_text.insert(argv_text.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_text) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, kSelf, &fa.actions, nullptr, argv.data(), environ);
    if (rc != 0) {
        throw Error(ExitCode::failed, fmt::format("cannot start a second cumemctl process: {}", std::strerror(rc)),
                    "check that /proc is mounted and that the process may start others (ulimit -u)");
    }
    return ChildProcess(pid);
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept : pid_(std::exchange(other.pid_, -1)) {}

ChildProcess::~ChildProcess() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
}

std::optional<int> ChildProcess::wait(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
        int status = 0;
        const pid_t r = waitpid(pid_, &status, WNOHANG);
        if (r == pid_) {
            pid_ = -1;
            return status;
        }
        if (r < 0 && errno != EINTR) {
            pid_ = -1;
            throw Error(ExitCode::failed, fmt::format("waitpid: {}", std::strerror(errno)));
        }
        if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

std::string describe_wait_status(int status) {
    if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
    if (WIFSIGNALED(status)) {
        const char* name = strsignal(WTERMSIG(status));
        return fmt::format("killed by signal {} ({})", WTERMSIG(status), name != nullptr ? name : "unknown");
    }
    return fmt::format("ended with wait status {}", status);
}

}  // namespace cumemctl
