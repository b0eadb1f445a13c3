#include "nvml/clocks.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

namespace cumemctl::nvml {
namespace {

// nvmlClocksEventReasons bits that mean the clocks are held down (nvml.h): the others are the GPU idle
// (0x1), application clock settings (0x2), sync boost (0x10) and display clock settings (0x100).
constexpr std::pair<unsigned long long, const char*> kSlowdowns[] = {
    {0x4ULL, "sw_power_cap"},
    {0x8ULL, "hw_slowdown"},
    {0x20ULL, "sw_thermal_slowdown"},
    {0x40ULL, "hw_thermal_slowdown"},
    {0x80ULL, "hw_power_brake_slowdown"},
};

std::optional<unsigned> clock(const Api& api, Device device, int type) {
    unsigned mhz = 0;
    if (api.device_get_clock_info == nullptr || api.device_get_clock_info(device, type, &mhz) != kSuccess)
        return std::nullopt;
    return mhz;
}

}  // namespace

ClockSample sample_clocks(const Library& nvml, Device device) {
    ClockSample s;
    if (!nvml.loaded()) return s;
    const Api& api = nvml.api();
    s.sm_mhz = clock(api, device, kClockSm);
    s.memory_mhz = clock(api, device, kClockMem);
    const auto reasons_fn = api.device_get_clocks_event_reasons != nullptr ? api.device_get_clocks_event_reasons
                                                                           : api.device_get_clocks_throttle_reasons;
    unsigned long long reasons = 0;
    if (reasons_fn != nullptr && reasons_fn(device, &reasons) == kSuccess) s.reasons = reasons;
    return s;
}

std::vector<std::string> slowdown_reasons(unsigned long long reasons) {
    std::vector<std::string> out;
    for (const auto& [bit, name] : kSlowdowns) {
        if ((reasons & bit) != 0) out.emplace_back(name);
    }
    return out;
}

ClockWatch::ClockWatch(const Library& nvml, Device device, int period_ms) : nvml_(nvml), device_(device) {
    add(sample_clocks(nvml_, device_));
    thread_ = std::thread([this, period_ms] {
        while (!done_.load()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(period_ms));
            add(sample_clocks(nvml_, device_));
        }
    });
}

ClockWatch::~ClockWatch() {
    stop();
}

void ClockWatch::add(const ClockSample& s) {
    const auto lower = [](std::optional<unsigned>& min, std::optional<unsigned> v) {
        if (v) min = min ? std::min(*min, *v) : *v;
    };
    const std::lock_guard<std::mutex> lock(mutex_);
    ++result_.samples;
    lower(result_.min_sm_mhz, s.sm_mhz);
    lower(result_.min_memory_mhz, s.memory_mhz);
    if (s.reasons) result_.reasons = result_.reasons.value_or(0) | *s.reasons;
}

ClockWatchResult ClockWatch::stop() {
    if (!done_.exchange(true)) {
        thread_.join();
        add(sample_clocks(nvml_, device_));
    }
    const std::lock_guard<std::mutex> lock(mutex_);
    return result_;
}

}  // namespace cumemctl::nvml
