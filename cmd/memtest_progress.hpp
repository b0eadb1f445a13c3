// memtest's progress bar on stderr: pattern, pass, GB done, GB/s and time left, redrawn a few times a
// second on one line, when stderr is a terminal; nothing when it is not.
#pragma once

#include <chrono>
#include <mutex>
#include <string>

#include "gpu/memtest/memtest_run.hpp"

namespace cumemctl::cmd {

class MemtestProgress {
public:
    // Draws only when `enabled` (stderr is a terminal and no --json).
    explicit MemtestProgress(bool enabled) : enabled_(enabled) {}
    ~MemtestProgress();  // ends the line when something was drawn
    MemtestProgress(const MemtestProgress&) = delete;
    MemtestProgress& operator=(const MemtestProgress&) = delete;

    // Called by each device's run after each chunk (any thread).
    void update(int device, const gpu::memtest::Progress& p);
    bool enabled() const { return enabled_; }

private:
    bool enabled_;
    bool drawn_ = false;
    std::mutex mutex_;
    std::chrono::steady_clock::time_point last_{};
};

}  // namespace cumemctl::cmd
