#include "ipc/process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "base/error.hpp"
#include "base/interrupt.hpp"
#include "base/pending.hpp"
#include "util/unique_fd.hpp"

namespace cumemctl::ipc {
namespace {

// The children started and not reaped yet, for end_every_child.
std::mutex& children_mutex() {
    static std::mutex m;
    return m;
}
std::set<pid_t>& children() {
    static std::set<pid_t> pids;
    return pids;
}
void started(pid_t pid) {
    const std::lock_guard<std::mutex> lock(children_mutex());
    children().insert(pid);
}
void reaped(pid_t pid) {
    const std::lock_guard<std::mutex> lock(children_mutex());
    children().erase(pid);
}

// posix_spawn file actions, destroyed with the object.
struct SpawnActions {
    posix_spawn_file_actions_t actions;
    SpawnActions() { posix_spawn_file_actions_init(&actions); }
    ~SpawnActions() { posix_spawn_file_actions_destroy(&actions); }
    SpawnActions(const SpawnActions&) = delete;
    SpawnActions& operator=(const SpawnActions&) = delete;
};

// Pointers to the strings, ended by a null pointer (argv, envp).
std::vector<char*> c_strings(std::vector<std::string>& strings) {
    std::vector<char*> out;
    for (auto& s : strings) out.push_back(s.data());
    out.push_back(nullptr);
    return out;
}

}  // namespace

Process Process::spawn(const SpawnRequest& request) {
    // dup2 onto the same number would keep close-on-exec: hand over a copy with another number.
    UniqueFd moved;
    if (request.pass_fd >= 0) {
        moved.reset(fcntl(request.pass_fd, F_DUPFD_CLOEXEC, kChildSocketFd + 1));
        if (!moved.valid()) throw Error(ExitCode::failed, fmt::format("fcntl: {}", std::strerror(errno)));
    }
    SpawnActions fa;
    posix_spawn_file_actions_addopen(&fa.actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa.actions, STDERR_FILENO, STDOUT_FILENO);
    if (moved.valid()) posix_spawn_file_actions_adddup2(&fa.actions, moved.get(), kChildSocketFd);
        // Everything above the descriptors it needs is closed, close-on-exec or not (glibc 2.34 on; before
        // that, only close-on-exec keeps a descriptor out, and every one this program opens has it).
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    posix_spawn_file_actions_addclosefrom_np(&fa.actions, moved.valid() ? kChildSocketFd + 1 : kChildSocketFd);
#endif
    std::vector<std::string> argv_text{"cumemctl"};
    argv_text.insert(argv_text.end(), request.args.begin(), request.args.end());
    std::vector<std::string> env_text = environment_with(environ, request.env);
    std::vector<char*> argv = c_strings(argv_text);
    std::vector<char*> envp = c_strings(env_text);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, request.executable.c_str(), &fa.actions, nullptr, argv.data(), envp.data());
    if (rc != 0) {
        throw Error(ExitCode::failed,
                    fmt::format("cannot start a second process ({}): {}", request.executable, std::strerror(rc)),
                    "check that /proc is mounted and that the process may start others (ulimit -u)");
    }
    started(pid);
    return Process(pid);
}

Process::Process(Process&& other) noexcept : pid_(std::exchange(other.pid_, -1)) {}

Process& Process::operator=(Process&& other) noexcept {
    if (this != &other) {
        kill_and_wait();
        pid_ = std::exchange(other.pid_, -1);
    }
    return *this;
}

Process::~Process() {
    stop_and_wait(kStopGrace);
}

int Process::stop_and_wait(Timeout grace) noexcept {
    if (pid_ <= 0) return -1;
    // Our own executable unwinds on SIGTERM (its guards release what it made); give it `grace`.
    ::kill(pid_, SIGTERM);
    int error = 0;
    const auto status = reap_until(std::chrono::steady_clock::now() + grace, false, error);
    return status ? *status : kill_and_wait();
}

int Process::kill_and_wait() {
    if (pid_ <= 0) return -1;
    ::kill(pid_, SIGKILL);
    int status = 0;
    pid_t r = -1;
    do {
        r = waitpid(pid_, &status, 0);
    } while (r < 0 && errno == EINTR);
    reaped(pid_);
    pid_ = -1;
    return r < 0 ? -1 : status;
}

std::optional<int> Process::wait(Timeout timeout) {
    if (pid_ <= 0) throw Error(ExitCode::failed, "internal error: waiting for a process that was reaped");
    const Pending pending("the second process's end");
    int error = 0;
    const auto status = reap_until(std::chrono::steady_clock::now() + timeout, true, error);
    if (status && *status == -1 && error != 0) {
        throw Error(ExitCode::failed, fmt::format("waitpid: {}", std::strerror(error)));
    }
    return status;
}

std::optional<int> Process::reap_until(std::chrono::steady_clock::time_point deadline, bool interruptible, int& error) {
    while (true) {
        int status = 0;
        const pid_t r = waitpid(pid_, &status, WNOHANG);
        if (r == pid_) {
            reaped(pid_);
            pid_ = -1;
            return status;
        }
        if (r < 0 && errno != EINTR) {
            error = errno;
            reaped(pid_);
            pid_ = -1;
            return -1;
        }
        if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
        // A stop request ends an interruptible wait; the owner's destructor then ends the child.
        if (interruptible) check_interrupted();
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
}

void end_every_child() noexcept {
    const std::lock_guard<std::mutex> lock(children_mutex());
    for (const pid_t pid : children()) ::kill(pid, SIGKILL);
    for (const pid_t pid : children()) {
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
    }
    children().clear();
}

std::vector<std::string> environment_with(const char* const* env,
                                          const std::vector<std::pair<std::string, std::string>>& overrides) {
    std::vector<std::string> out;
    for (const char* const* e = env; e != nullptr && *e != nullptr; ++e) {
        const std::string entry(*e);
        const std::string name = entry.substr(0, entry.find('='));
        bool replaced = false;
        for (const auto& o : overrides) replaced = replaced || o.first == name;
        if (!replaced) out.push_back(entry);
    }
    for (const auto& [name, value] : overrides) out.push_back(fmt::format("{}={}", name, value));
    return out;
}

std::string describe_wait_status(int status) {
    if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
    if (WIFSIGNALED(status)) {
        const char* name = strsignal(WTERMSIG(status));
        return fmt::format("killed by signal {} ({})", WTERMSIG(status), name != nullptr ? name : "unknown");
    }
    return fmt::format("ended with wait status {}", status);
}

int exit_code_of(int status) {
    if (status < 0) return -1;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return -1;
}

void die_with_parent() {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
}

}  // namespace cumemctl::ipc
