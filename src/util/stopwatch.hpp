// Wall-clock timing of steps, in seconds, for reports and benchmarks.
#pragma once

#include <chrono>

namespace cumemctl {

// Measures elapsed wall-clock time from construction (or the last restart).
class Stopwatch {
public:
    Stopwatch() : start_(std::chrono::steady_clock::now()) {}
    // Seconds since construction or the last restart.
    double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }
    // Returns the elapsed seconds and starts again.
    double lap() {
        const auto now = std::chrono::steady_clock::now();
        const double s = std::chrono::duration<double>(now - start_).count();
        start_ = now;
        return s;
    }

private:
    std::chrono::steady_clock::time_point start_;
};

}  // namespace cumemctl
