#include "ipc/process.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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
#include "util/open_fds.hpp"

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
// Every child started, reaped or not, for started_here.
std::set<pid_t>& ever_started() {
    static std::set<pid_t> pids;
    return pids;
}
void started(pid_t pid) {
    const std::lock_guard<std::mutex> lock(children_mutex());
    children().insert(pid);
    ever_started().insert(pid);
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

// glibc 2.34's posix_spawn_file_actions_addclosefrom_np, found at run time: the release binaries are
// built against glibc 2.31 (docs/platforms.md), whose headers lack it, and still use it wherever they run on 2.34
// or later. Null before 2.34 (and outside glibc).
using AddCloseFrom = int (*)(posix_spawn_file_actions_t*, int);
AddCloseFrom add_close_from_np() {
#if defined(__GLIBC__)
    static const auto fn = reinterpret_cast<AddCloseFrom>(
        ::dlvsym(RTLD_DEFAULT, "posix_spawn_file_actions_addclosefrom_np", "GLIBC_2.34"));
    return fn;
#else
    return nullptr;
#endif
}

// Closes, in the child, every descriptor from `first` on, close-on-exec or not. With glibc 2.34 on, one
// action closes what the child holds when it starts. Before that, one close action per descriptor open
// here now, read from /proc/self/fd: a descriptor without close-on-exec that another thread opens
// between the listing and the start can then cross (every one this program opens has close-on-exec; a
// driver's export need not). A close action for a descriptor closed meanwhile is no error (glibc and
// musl report only numbers out of range). Without /proc only close-on-exec keeps descriptors out.
void add_close_from(SpawnActions& fa, int first) {
    if (const AddCloseFrom fn = add_close_from_np()) {
        fn(&fa.actions, first);
        return;
    }
    for (const int fd : open_fd_numbers()) {
        if (fd >= first) posix_spawn_file_actions_addclose(&fa.actions, fd);
    }
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
    posix_spawn_file_actions_adddup2(&fa.actions, request.stdout_fd >= 0 ? request.stdout_fd : STDERR_FILENO,
                                     STDOUT_FILENO);
    if (request.stderr_fd >= 0) posix_spawn_file_actions_adddup2(&fa.actions, request.stderr_fd, STDERR_FILENO);
    if (moved.valid()) posix_spawn_file_actions_adddup2(&fa.actions, moved.get(), kChildSocketFd);
    // Everything above the descriptors it needs is closed, close-on-exec or not (one inherited without it
    // from whoever started us, a driver's exported handle).
    add_close_from(fa, moved.valid() ? kChildSocketFd + 1 : kChildSocketFd);
    std::vector<std::string> argv_text{request.argv0};
    argv_text.insert(argv_text.end(), request.args.begin(), request.args.end());
    std::vector<std::string> env_text = environment_with(environ, request.env);
    std::vector<char*> argv = c_strings(argv_text);
    std::vector<char*> envp = c_strings(env_text);
    // The child runs the file this process holds open, through this process's descriptor: its own
    // descriptors above stderr are closed before it starts.
    const std::string executable = request.executable_fd >= 0
                                       ? fmt::format("/proc/{}/fd/{}", ::getpid(), request.executable_fd)
                                       : request.executable;
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, executable.c_str(), &fa.actions, nullptr, argv.data(), envp.data());
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
    if (pid_ <= 0) throw Error(internal_error("waiting for a process that was reaped"));
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

CapturedRun run_captured(SpawnRequest request, Timeout limit) {
    int out_pipe[2], err_pipe[2];
    if (pipe2(out_pipe, O_CLOEXEC) != 0) throw Error(ExitCode::failed, fmt::format("pipe: {}", std::strerror(errno)));
    UniqueFd out_read(out_pipe[0]), out_write(out_pipe[1]);
    if (pipe2(err_pipe, O_CLOEXEC) != 0) throw Error(ExitCode::failed, fmt::format("pipe: {}", std::strerror(errno)));
    UniqueFd err_read(err_pipe[0]), err_write(err_pipe[1]);
    request.stdout_fd = out_write.get();
    request.stderr_fd = err_write.get();
    Process child = Process::spawn(request);
    out_write.reset();
    err_write.reset();
    CapturedRun run;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    struct Stream {
        UniqueFd* fd;
        std::string* text;
    } streams[] = {{&out_read, &run.out}, {&err_read, &run.err}};
    // Read until both pipes end (the program and anything it started have closed them) or time is up.
    while (out_read.valid() || err_read.valid()) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) break;
        pollfd fds[2];
        nfds_t n = 0;
        for (auto& s : streams) {
            if (s.fd->valid()) fds[n++] = pollfd{s.fd->get(), POLLIN, 0};
        }
        const int ready = poll(fds, n, static_cast<int>(std::min<long long>(left.count(), 50)));
        check_interrupted();
        if (ready <= 0) continue;
        for (auto& s : streams) {
            if (!s.fd->valid()) continue;
            for (nfds_t i = 0; i < n; ++i) {
                if (fds[i].fd != s.fd->get() || fds[i].revents == 0) continue;
                char buffer[4096];
                const ssize_t got = read(s.fd->get(), buffer, sizeof buffer);
                if (got > 0 && s.text->size() < kCaptureLimit) {
                    s.text->append(
                        buffer, std::min<std::size_t>(static_cast<std::size_t>(got), kCaptureLimit - s.text->size()));
                } else if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) {
                    s.fd->reset();
                }
            }
        }
    }
    const auto left = std::chrono::duration_cast<Timeout>(deadline - std::chrono::steady_clock::now());
    run.status = child.wait(std::max(left, Timeout(0)));
    if (!run.status) child.stop_and_wait(Timeout(200));
    return run;
}

bool started_here(pid_t pid) {
    const std::lock_guard<std::mutex> lock(children_mutex());
    return ever_started().count(pid) != 0;
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
