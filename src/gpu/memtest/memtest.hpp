// `memtest` on one device: its context and kernels, the free memory at the start, NVML's view before,
// the memory made (memtest_memory), the patterns run (memtest_run), everything released, NVML's view
// after and the verdict. A stop request ends it with what was done; a driver failure throws Error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cuda/driver_api.hpp"
#include "gpu/memtest/memtest_health.hpp"
#include "gpu/memtest/memtest_memory.hpp"
#include "gpu/memtest/memtest_run.hpp"
#include "gpu/memtest/memtest_verdict.hpp"
#include "nvml/nvml.hpp"
#include "nvml/processes.hpp"
#include "steps/step.hpp"

namespace cumemctl::gpu::memtest {

// How much of the device to test: its free memory at the start less `leave`, all of it or a
// fraction, or exactly `size` bytes (at most the free memory less `leave`), in chunks of `chunk` bytes
// (0: the default chunk, kDefaultChunk rounded to the granularity).
struct SizePlan {
    std::uint64_t leave = 0;
    std::optional<std::uint64_t> size;
    std::optional<double> fraction;
    std::uint64_t chunk = 0;
};

// The chunk size when none is asked for: large enough that a 141 GiB device needs few cuMemCreate calls.
inline constexpr std::uint64_t kDefaultChunk = std::uint64_t{1} << 30;

// What a device's memtest found.
struct DeviceMemtest {
    int ordinal = 0;
    std::string uuid, name;
    std::uint64_t free_at_start = 0;                  // cuMemGetInfo in this process's context, kernels loaded
    std::optional<std::uint64_t> nvml_free_at_start;  // NVML's, before this process made its context
    std::uint64_t granularity = 0, chunk = 0, target = 0, tested = 0;
    std::size_t chunks = 0;
    bool size_capped = false;  // --size was more than the free memory less the margin
    std::optional<Problem> shortfall;
    RunResult run;
    std::optional<HealthWatch> health;
    std::string nvml_unavailable;                   // why there is no `health`
    std::vector<nvml::GpuProcess> other_processes;  // what NVML listed beside this process (run with force)
    std::string processes_unavailable;              // why NVML could not list them, if so
    Verdict verdict;
    std::vector<steps::Step> steps;
    std::vector<Problem> release_failures;
    double seconds = 0;
    // Bytes tested against the free memory at the start.
    double coverage() const {
        return free_at_start > 0 ? static_cast<double>(tested) / static_cast<double>(free_at_start) : 0;
    }
};

// Runs memtest on `device` (nvml may be null or not loaded). Throws Error: busy (exit 3, held_by the
// processes) before its context is made, when NVML lists another process on the device and `force` is
// false, since memtest would take the memory they may need next; usage (exit 2) before any memory is
// made (its context is released again) for a chunk off the recommended granularity or a size below it;
// else on a driver failure. Each names the settings to change through setting_name. A stop request is a
// result (run.interrupted_by).
DeviceMemtest run_device_memtest(const DriverApi& api, const nvml::Library* nvml, int device, const SizePlan& sizes,
                                 const RunPlan& plan, bool force);

}  // namespace cumemctl::gpu::memtest
