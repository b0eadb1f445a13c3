// CUMEMCTL_TIMING=1: where a run's time goes, on stderr, one line per phase, for finding what a
// command spends beyond the driver's own calls (such as devices --no-free against the
// least a program making the same queries takes).
// Each line: "cumemctl[PID]: timing PHASE +MS ms (since exec: MS ms)"; the first phase is how long
// the process had run before main (the loader, static initialisers: from /proc/self/stat). Without
// the variable, a phase mark costs one branch.
#pragma once

#include <string>
#include <string_view>

namespace cumemctl {

// Whether CUMEMCTL_TIMING is set to something other than "" or "0" (read once).
bool phase_timing_enabled();

// Marks the end of a phase (begun at the mark before, or at exec): prints its line where timing is
// enabled. Second processes inherit the variable; their lines carry their own PID.
void mark_phase(std::string_view phase);

// The line mark_phase prints for a phase that took `phase_ms` and ended `since_exec_ms` after exec
// (negative: unknown).
std::string phase_line(std::string_view phase, double phase_ms, double since_exec_ms);

// Milliseconds from this process's exec to now, from /proc/self/stat's start time and
// CLOCK_BOOTTIME; negative where /proc cannot say.
double ms_since_exec();

}  // namespace cumemctl
