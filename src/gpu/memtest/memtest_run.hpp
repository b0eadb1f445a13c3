// Runs the memtest patterns over a TestMemory on its device: each pass a kernel launch per chunk, at
// most one chunk queued behind the one running (so that a stop request ends the run within a chunk),
// each pattern timed with events, mismatches counted exactly and the first ones recorded.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cuda/driver_api.hpp"
#include "gpu/memtest/memtest_memory.hpp"
#include "gpu/memtest/memtest_patterns.hpp"

namespace cumemctl::gpu::memtest {

// Where a run stands, for a progress display.
struct Progress {
    std::string pattern;
    unsigned pass = 0;  // 1-based
    unsigned passes = 0;
    std::uint64_t bytes_done = 0;   // bytes read plus written so far in the whole run
    std::uint64_t bytes_total = 0;  // the same for the whole run as planned
    double seconds = 0;
};

// How to run.
struct RunPlan {
    std::vector<Pattern> patterns;
    unsigned passes = 1;
    std::optional<double> time_budget;              // seconds; the pattern under way is finished when it runs out
    std::uint64_t seed = 0;                         // the random pattern's
    unsigned max_records = 32;                      // mismatches recorded in full (the count is always exact)
    std::function<void(const Progress&)> progress;  // called after each chunk; may be empty
    // Asked before each pattern pass: a reason to stop and give the memory back (another process has
    // appeared on the device), or empty to go on. May be empty.
    std::function<std::string()> yield;
};

// One mismatching 16-byte word.
struct Mismatch {
    std::string pattern;
    unsigned pass = 0;
    std::size_t chunk = 0;
    std::uint64_t offset = 0;  // byte offset of the word in the range
    std::uint64_t expected_lo = 0, expected_hi = 0, actual_lo = 0, actual_hi = 0;
    // The bits that differ, 0..127 over the word's 16 bytes (bit 8*B+b is bit b of byte B).
    std::vector<unsigned> bits() const;
};

// One pattern's pass over the range.
struct PatternResult {
    std::string pattern;
    unsigned pass = 0;
    std::uint64_t bytes = 0;    // the range
    std::uint64_t traffic = 0;  // bytes read plus written
    double seconds = 0;         // between events around its kernels
    std::uint64_t mismatches = 0;
    double gbps() const { return seconds > 0 ? static_cast<double>(traffic) / seconds / 1e9 : 0; }
};

// What a run did.
struct RunResult {
    std::vector<PatternResult> done;   // in the order they ran
    std::vector<std::string> not_run;  // "walking pass 1": left out when the time budget ran out or the run yielded
    std::uint64_t mismatches = 0;      // exact
    std::vector<Mismatch> recorded;    // the first max_records (per pattern pass), in address order
    bool budget_ran_out = false;
    std::string stopped_in;  // "inversions pass 1": the pattern a stop request ended, else empty
    std::string yielded;     // why the run gave its memory back early (RunPlan::yield), else empty
    int interrupted_by = 0;  // SIGINT or SIGTERM when a stop request ended it, else 0
    double seconds = 0;
};

struct RunResources;

// What a run needs besides the memory it tests (stream, events, the mismatch log, the kernels loaded
// and launched once on nothing), made before that memory so that nothing is asked of the driver once
// the device is full. Throws Error.
class PatternRunner {
public:
    PatternRunner(const DriverApi& api, const RunPlan& plan);
    ~PatternRunner();
    PatternRunner(const PatternRunner&) = delete;
    PatternRunner& operator=(const PatternRunner&) = delete;

    // Runs the plan over `memory`. A stop request (SIGINT, SIGTERM) is not thrown: the kernels queued are
    // waited for, and the result says what was done and by which signal it stopped. Throws Error when a
    // driver call fails.
    RunResult run(const TestMemory& memory);

private:
    const DriverApi& api_;
    const RunPlan& plan_;
    std::unique_ptr<RunResources> res_;
};

}  // namespace cumemctl::gpu::memtest
