// A GPU's clocks now and why they are held down (nvmlDeviceGetClockInfo,
// nvmlDeviceGetCurrentClocksEventReasons, once called ...ThrottleReasons): sampled while copies run, so
// that a slow figure says whether the GPU was throttled (power, thermal, a hardware slowdown) meanwhile.
#pragma once

#include <atomic>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "nvml/nvml.hpp"

namespace cumemctl::nvml {

// One sample.
struct ClockSample {
    std::optional<unsigned> sm_mhz, memory_mhz;
    std::optional<unsigned long long> reasons;  // nvmlClocksEventReasons bits
};

// Asks NVML; fields it did not answer stay empty. Never throws.
ClockSample sample_clocks(const Library& nvml, Device device);

// The reasons that slow a GPU down, by name ("sw_power_cap", "hw_slowdown", "sw_thermal_slowdown",
// "hw_thermal_slowdown", "hw_power_brake_slowdown"), in bit order; idle and settings left out.
std::vector<std::string> slowdown_reasons(unsigned long long reasons);

// What a watch saw: the lowest clocks and every reason seen, over `samples` samples.
struct ClockWatchResult {
    int samples = 0;
    std::optional<unsigned> min_sm_mhz, min_memory_mhz;
    std::optional<unsigned long long> reasons;  // the reasons of every sample, or-ed
};

// Samples a device's clocks on a thread of its own, about every `period_ms`, from construction until
// stop() (or destruction): what copies ran beside. The first sample is taken at once.
class ClockWatch {
public:
    ClockWatch(const Library& nvml, Device device, int period_ms = 2);
    ~ClockWatch();
    ClockWatch(const ClockWatch&) = delete;
    ClockWatch& operator=(const ClockWatch&) = delete;

    // Ends the sampling and returns what it saw.
    ClockWatchResult stop();

private:
    void add(const ClockSample& s);

    const Library& nvml_;
    Device device_;
    std::mutex mutex_;
    ClockWatchResult result_;
    std::atomic<bool> done_{false};
    std::thread thread_;
};

}  // namespace cumemctl::nvml
