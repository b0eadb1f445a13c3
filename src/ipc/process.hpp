// Second processes of our own executable: the one way to start one. The child is /proc/self/exe (or a
// program named for tests) with chosen arguments, the parent's environment with chosen variables set
// or replaced (a later change sets CUDA_VISIBLE_DEVICES), and exactly the descriptors it needs: stdin
// from /dev/null, stdout onto our stderr (our own stdout stays one document), our stderr, and the
// passed socket at a fixed number; nothing else crosses. The child is ended and reaped when its
// owner (the Process object) goes while it runs (SIGTERM, so that it unwinds and releases what it made,
// then SIGKILL after a grace time), and dies with us where it calls die_with_parent().
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ipc/timeout.hpp"

namespace cumemctl::ipc {

// How long a child that its owner drops while it runs has to end on SIGTERM before SIGKILL.
inline constexpr Timeout kStopGrace{3000};

// Where a child finds the socket to its parent.
inline constexpr int kChildSocketFd = 3;
// Our own executable.
inline constexpr const char* kSelfExecutable = "/proc/self/exe";

// What to start.
struct SpawnRequest {
    std::string executable = kSelfExecutable;
    int executable_fd = -1;         // run this open file instead (trusted_file's descriptor): no name looked up again
    std::vector<std::string> args;  // argv[1..]; argv[0] is "cumemctl"
    std::vector<std::pair<std::string, std::string>> env;  // set (or replace) in the child's environment
    int pass_fd = -1;                                      // handed to the child as kChildSocketFd; -1: none
    std::string argv0 = "cumemctl";                        // argv[0] (another program's own name)
    int stdout_fd = -1;                                    // the child's stdout and stderr; -1: our stderr
    int stderr_fd = -1;
};

// A started child process, waited for exactly once.
class Process {
public:
    // Starts the child. Throws Error (failed) when it cannot start.
    static Process spawn(const SpawnRequest& request);

    Process(Process&& other) noexcept;
    Process& operator=(Process&& other) noexcept;
    Process(const Process&) = delete;
    Process& operator=(const Process&) = delete;
    // Ends (stop_and_wait with kStopGrace) and reaps a child that still runs.
    ~Process();

    pid_t pid() const { return pid_; }
    // Whether the child has not been reaped yet.
    bool running() const { return pid_ > 0; }

    // Waits at most `timeout` for the child to end and returns its wait status; nullopt when it
    // still runs then. Throws Error (failed) when waitpid fails, Interrupted when SIGINT or SIGTERM came
    // (the child still runs: the owner's destructor ends it).
    std::optional<int> wait(Timeout timeout);
    // Kills the child (SIGKILL) and reaps it; its wait status (-1 when it was reaped already).
    int kill_and_wait();
    // Asks the child to stop (SIGTERM), waits at most `grace`, then kills (SIGKILL) and reaps it; its
    // wait status (-1 when it was reaped already).
    int stop_and_wait(Timeout grace) noexcept;

private:
    explicit Process(pid_t pid) : pid_(pid) {}
    // Reaps the child without blocking, polling until it ends or `deadline` passes: its wait status,
    // nullopt when it still runs then, or -1 with `error` set when waitpid failed (the child is
    // forgotten). With `interruptible`, a stop request ends the wait by throwing Interrupted.
    std::optional<int> reap_until(std::chrono::steady_clock::time_point deadline, bool interruptible, int& error);
    pid_t pid_ = -1;  // -1 once reaped
};

// What a program run by run_captured printed and how it ended.
struct CapturedRun {
    std::optional<int> status;  // its wait status; nullopt when it ran past the time limit (it was killed)
    std::string out;            // stdout and stderr, each cut at kCaptureLimit bytes
    std::string err;
};
inline constexpr std::size_t kCaptureLimit = 1 << 20;

// Runs a program (request.executable, not our own) to its end, at most `limit`: its stdout and stderr
// read through pipes while it runs, and a program still running then stopped (SIGTERM, then SIGKILL) and
// reaped, so that the caller waits `limit` and a little more, whatever the program does. Throws Error
// (failed) when it cannot start, Interrupted on SIGINT or SIGTERM (the program is ended).
CapturedRun run_captured(SpawnRequest request, Timeout limit);

// Kills (SIGKILL) and reaps every child that a Process of this process started and has not reaped: for a
// process that ends without unwinding the threads that own them (doctor past its time budget, whose
// threads wait in a call that never returns). Their Process objects must not be used afterwards.
void end_every_child() noexcept;

// Whether a Process of this process started `pid`, reaped since or not: a second process of our own
// (NVML may still list one that has just ended).
bool started_here(pid_t pid);

// The environment `env` (NAME=value strings, as environ) with `overrides` set or replaced.
std::vector<std::string> environment_with(const char* const* env,
                                          const std::vector<std::pair<std::string, std::string>>& overrides);

// "exited with status N" or "killed by signal N (NAME)" for a wait status.
std::string describe_wait_status(int status);
// A wait status as an exit code: the exit status, or 128 + N when signal N ended the process.
int exit_code_of(int status);

// In a child: asks the kernel to kill this process when its parent goes (PR_SET_PDEATHSIG).
void die_with_parent();

}  // namespace cumemctl::ipc
