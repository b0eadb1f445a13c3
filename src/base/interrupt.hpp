// SIGINT and SIGTERM as an orderly stop: the handler only records the signal; the run checks for it at
// safe points (between steps, in waits, between checks and channels) and unwinds by throwing
// Interrupted, so that every guard releases what it holds and a child is ended and reaped. The command
// then reports the stop and exits 128 + the signal (130 for SIGINT, 143 for SIGTERM).
#pragma once

#include <stdexcept>

#include "base/exit_code.hpp"

namespace cumemctl {

// Thrown at a safe point once SIGINT or SIGTERM came. Deliberately not an Error and not a
// std::exception: no handler that turns failures into results (a step, a check) may swallow it.
class Interrupted {
public:
    explicit Interrupted(int signal) : signal_(signal) {}
    // The signal that stopped the run.
    int signal() const { return signal_; }
    // 130 for SIGINT, 143 for SIGTERM.
    ExitCode exit_code() const;
    // "interrupted by SIGINT".
    const char* what() const noexcept;

private:
    int signal_;
};

// Installs the handler for SIGINT and SIGTERM (no SA_RESTART: a blocking call returns EINTR) and
// unblocks both. Call once at the start of main.
void install_interrupt_handler();
// The signal that came (SIGINT or SIGTERM), or 0. Async-signal-safe to read.
int interrupt_signal();
// Throws Interrupted when a signal came: call at safe points, never in a destructor or an undo.
void check_interrupted();
// Forgets a recorded signal (tests).
void clear_interrupt();
// Records `signal` as the handler does (tests, and the handler itself).
void record_interrupt(int signal);

}  // namespace cumemctl
