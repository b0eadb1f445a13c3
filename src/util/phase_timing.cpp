#include "util/phase_timing.hpp"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <sstream>

#include <fmt/format.h>

#include "util/text_file.hpp"

namespace cumemctl {

bool phase_timing_enabled() {
    static const bool enabled = [] {
        const char* v = std::getenv("CUMEMCTL_TIMING");
        return v != nullptr && *v != '\0' && std::string_view(v) != "0";
    }();
    return enabled;
}

std::string phase_line(std::string_view phase, double phase_ms, double since_exec_ms) {
    const int pid = static_cast<int>(getpid());
    if (since_exec_ms < 0) return fmt::format("cumemctl[{}]: timing {} +{:.1f} ms\n", pid, phase, phase_ms);
    return fmt::format("cumemctl[{}]: timing {} +{:.1f} ms (since exec: {:.1f} ms)\n", pid, phase, phase_ms,
                       since_exec_ms);
}

double ms_since_exec() {
    // Field 22 of /proc/self/stat: the start time in clock ticks after boot (10 ms apart where
    // CLK_TCK is 100: coarse, enough to see the time before main); the command name (field 2) may hold
    // spaces, so count from its closing parenthesis.
    const std::string stat = try_read_text_file("/proc/self/stat").value_or("");
    const auto close = stat.rfind(')');
    if (close == std::string::npos) return -1;
    std::istringstream rest(stat.substr(close + 1));
    std::string field;
    unsigned long long start_ticks = 0;
    for (int i = 3; i <= 22 && rest >> field; ++i) {
        if (i == 22) start_ticks = std::stoull(field);
    }
    const long ticks = sysconf(_SC_CLK_TCK);
    timespec now{};
    if (start_ticks == 0 || ticks <= 0 || clock_gettime(CLOCK_BOOTTIME, &now) != 0) return -1;
    const double now_ms = static_cast<double>(now.tv_sec) * 1e3 + static_cast<double>(now.tv_nsec) / 1e6;
    return now_ms - static_cast<double>(start_ticks) * 1e3 / static_cast<double>(ticks);
}

void mark_phase(std::string_view phase) {
    if (!phase_timing_enabled()) return;
    static std::mutex mutex;
    static std::chrono::steady_clock::time_point last{};
    const std::lock_guard<std::mutex> lock(mutex);
    const auto now = std::chrono::steady_clock::now();
    const double since_exec = ms_since_exec();
    // The first mark's phase began at exec (where /proc says when that was).
    const double took = last == std::chrono::steady_clock::time_point{}
                            ? std::max(since_exec, 0.0)
                            : std::chrono::duration<double, std::milli>(now - last).count();
    last = now;
    const std::string line = phase_line(phase, took, since_exec);
    std::fputs(line.c_str(), stderr);
}

}  // namespace cumemctl
