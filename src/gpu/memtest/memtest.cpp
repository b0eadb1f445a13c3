#include "gpu/memtest/memtest.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/interrupt.hpp"
#include "base/setting.hpp"
#include "gpu/device/memory_props.hpp"
#include "gpu/device/devices.hpp"
#include "gpu/device/granularity.hpp"
#include "gpu/device/held_device.hpp"
#include "gpu/device/primary_context.hpp"
#include "gpu/diagnosis/diagnosis.hpp"
#include "gpu/verify/verify_module.hpp"
#include "util/size.hpp"
#include "util/stopwatch.hpp"

namespace cumemctl::gpu::memtest {
namespace {

// A chunk size or a size to test that the device's recommended granularity `granule` refuses (usage).
void check_granularity(const DeviceMemtest& d, const SizePlan& s, std::uint64_t granule) {
    if (s.chunk != 0 && s.chunk % granule != 0) {
        const NearestSizes near = nearest_valid_sizes(s.chunk, granule);
        const auto [lower, upper] = format_sizes_apart(near.lower, near.upper);
        const std::string chunk = setting_name(Setting::chunk);
        throw Error(Problem{.exit_code = ExitCode::usage,
                            .message = fmt::format("{} {} is no multiple of GPU {}'s recommended granularity ({})",
                                                   chunk, format_size(s.chunk), d.ordinal, format_size(granule)),
                            .remedy = fmt::format("give {} {} or {}", chunk, lower, upper),
                            .device = d.ordinal});
    }
    if (s.size && *s.size < granule) {
        const std::string size = setting_name(Setting::test_size);
        throw Error(Problem{.exit_code = ExitCode::usage,
                            .message = fmt::format("{} {} is less than GPU {}'s recommended granularity ({})", size,
                                                   format_size(*s.size), d.ordinal, format_size(granule)),
                            .remedy = fmt::format("give {} {} or more", size, format_size(granule)),
                            .device = d.ordinal});
    }
}

// Refuses to start beside the other processes that NVML lists on the device (busy, exit 3).
[[noreturn]] void refuse_beside(const DeviceMemtest& d) {
    Problem p{.message = fmt::format("memtest did not start on GPU {} ({}): NVML lists {} on it: {}", d.ordinal, d.uuid,
                                     d.other_processes.size() == 1 ? "another process" : "other processes",
                                     holders_sentence(d.other_processes)),
              .cause = "memtest takes all the free memory for its run; a process beside it would find none",
              .remedy = fmt::format("run memtest when the GPU is idle (drain its jobs first), or give {} to run anyway",
                                    setting_name(Setting::start_anyway)),
              .device = d.ordinal};
    mark_held(p, d.other_processes);
    throw Error(std::move(p));
}

// The bytes to test and the chunk size, from the free memory and the plan.
void plan_sizes(DeviceMemtest& d, const SizePlan& s) {
    const std::uint64_t granule = std::max<std::uint64_t>(d.granularity, 1);
    check_granularity(d, s, granule);
    d.chunk = s.chunk != 0 ? s.chunk : std::max(granule, round_down(kDefaultChunk, granule));
    const std::uint64_t room = d.free_at_start > s.leave ? d.free_at_start - s.leave : 0;
    std::uint64_t target = room;
    if (s.size) {
        target = std::min(*s.size, room);
        d.size_capped = *s.size > room;
    } else if (s.fraction) {
        target = static_cast<std::uint64_t>(std::floor(static_cast<double>(room) * *s.fraction));
    }
    d.target = round_down(target, granule);
    if (d.target > 0) d.chunk = std::min(d.chunk, d.target);
}

// The other processes on the device at the start (refused unless forced), and the plan whose yield,
// between pattern passes, gives the memory back when a process that was not there appears.
RunPlan watch_other_processes(const nvml::Library* nvml, const std::optional<nvml::Device>& handle, DeviceMemtest& d,
                              const RunPlan& plan, bool force) {
    RunPlan mine = plan;
    if (!handle) {
        d.processes_unavailable = d.nvml_unavailable;
        return mine;
    }
    const HeldDevice held = holders_of(nvml, d.uuid, {::getpid()});
    d.other_processes = held.holders;
    if (held.verdict == HeldDevice::Verdict::holders_unknown) d.processes_unavailable = held.why;
    if (!d.other_processes.empty() && !force) refuse_beside(d);
    mine.yield = [nvml, &d] {
        for (const auto& p : holders_of(nvml, d.uuid, {::getpid()}).holders) {
            const bool known = std::any_of(d.other_processes.begin(), d.other_processes.end(),
                                           [&](const nvml::GpuProcess& q) { return q.pid == p.pid; });
            if (!known) return fmt::format("{} appeared on the device", nvml::describe(p));
        }
        return std::string();
    };
    return mine;
}

}  // namespace

DeviceMemtest run_device_memtest(const DriverApi& api, const nvml::Library* nvml, int device, const SizePlan& sizes,
                                 const RunPlan& plan, bool force) {
    Stopwatch watch;
    DeviceMemtest d;
    d.ordinal = device;
    const DeviceInfo info = query_device(api, device);
    d.uuid = info.uuid;
    d.name = info.name;
    StepLog log(api, {});
    const std::optional<nvml::Device> handle = nvml::find_device(nvml, d.uuid, d.nvml_unavailable);
    const RunPlan mine = watch_other_processes(nvml, handle, d, plan, force);
    std::optional<XidWatch> xids;
    if (handle) {
        // NVML's view before this process takes anything: its free memory is the device's before our context.
        d.health.emplace();
        d.health->before = nvml::query_memory_health(*nvml, *handle);
        d.nvml_free_at_start = d.health->before.free;
        xids.emplace(*nvml, *handle);
    }
    try {
        const PrimaryContext context(api, device);
        // The kernels, stream, events and mismatch log before the free memory is read: nothing is asked of
        // the driver once the device is full.
        std::optional<PatternRunner> runner;
        log.time("load kernels", "cuModuleLoadData", [&] { runner.emplace(api, mine); });
        d.free_at_start = current_device_memory(api).free;
        d.granularity = allocation_granularity(api, allocation_prop(api, MemoryRequest{}, device)).recommended;
        plan_sizes(d, sizes);
        {
            TestMemory memory(api, MemoryPlan{device, d.target, d.chunk, d.granularity}, log);
            d.tested = memory.bytes();
            d.chunks = memory.chunks().size();
            d.shortfall = memory.shortfall();
            d.run = runner->run(memory);
            memory.release(log);
        }
    } catch (const Interrupted& stop) {
        // Stopped while the memory was being made: the guards have released it; nothing was tested.
        d.run.interrupted_by = stop.signal();
        d.run.stopped_in = "allocation";
        d.tested = 0;
    }
    if (handle && d.health) {
        d.health->after = nvml::query_memory_health(*nvml, *handle);
        d.health->xids = xids ? xids->collect() : std::vector<unsigned long long>{};
        d.health->xid_unavailable = xids ? xids->unavailable() : "";
    }
    d.verdict = judge(d.run, d.health ? &*d.health : nullptr, device, d.uuid);
    d.steps = log.steps();
    if (log.problem()) d.release_failures.push_back(*log.problem());
    for (const auto& p : log.undo_failures()) d.release_failures.push_back(p);
    d.seconds = watch.seconds();
    return d;
}

}  // namespace cumemctl::gpu::memtest
