// A second process started from this program's own executable (/proc/self/exe), for work that needs a
// fresh process (a CUDA importer): one descriptor handed over, stdout discarded, and the child killed
// and reaped if it is still running when its owner goes.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace cumemctl {

// A running child process.
class ChildProcess {
public:
    // Starts /proc/self/exe with `args` (argv[1..]); the child's descriptor `child_fd` is a duplicate of
    // this process's `pass_fd`, its stdin and stdout are /dev/null, its stderr is ours. Throws Error
    // (failed) when it cannot start.
    static ChildProcess spawn_self(const std::vector<std::string>& args, int pass_fd, int child_fd);

    ChildProcess(ChildProcess&& other) noexcept;
    ChildProcess& operator=(ChildProcess&&) = delete;
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;
    ~ChildProcess();

    pid_t pid() const { return pid_; }

    // Waits at most `timeout` for the child to end and returns its wait status; nullopt when it is
    // still running then.
    std::optional<int> wait(std::chrono::milliseconds timeout);

private:
    explicit ChildProcess(pid_t pid) : pid_(pid) {}
    pid_t pid_ = -1;  // -1 once reaped
};

// "exited with status N" or "killed by signal N (NAME)" for a wait status.
std::string describe_wait_status(int status);

}  // namespace cumemctl
