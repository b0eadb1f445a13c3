// The memory-health check: what NVML knows of a device's memory (ECC, remapped rows), no context needed.
#include <fmt/format.h>

#include "doctor/registry.hpp"
#include "gpu/memtest/memtest_record.hpp"
#include "nvml/memory_health.hpp"

namespace cumemctl::doctor {
using namespace gpu;

CheckOutcome check_memory_health(DoctorContext& ctx, DeviceState* device) {
    if (ctx.nvml == nullptr || !ctx.nvml->loaded()) {
        const std::string why = ctx.nvml == nullptr ? "NVML was not loaded" : ctx.nvml->info().error;
        return CheckOutcome::skip(fmt::format("no NVML to ask: {}", why), NvmlUnavailable{why});
    }
    const DeviceInfo& info = device->info();
    std::string why;
    const auto handle = ctx.nvml_device(info.uuid, why);
    if (!handle) return CheckOutcome::skip(why, NvmlUnavailable{why});
    const nvml::MemoryHealth health = nvml::query_memory_health(*ctx.nvml, *handle);
    const nvml::HealthVerdict verdict = nvml::judge_memory_health(health);
    MemoryHealthEvidence details{health, info.uuid, std::nullopt, {}};
    // What the last `memtest --record` of this GPU found, when one was kept: said, never judged here.
    std::string no_memtest;
    const auto memtest = memtest::load_memtest_record(memtest::memtest_state_path(), info.uuid, &no_memtest);
    details.last_memtest = memtest;
    if (!memtest) details.last_memtest_unavailable = no_memtest;
    const std::string reason =
        memtest ? fmt::format("{}; {}", verdict.reason, memtest::describe(*memtest)) : verdict.reason;
    const int gpu = device->ordinal();
    CheckOutcome outcome;
    switch (verdict.status) {
        case CheckStatus::fail:
            outcome = CheckOutcome::fail(
                reason,
                fmt::format("drain the jobs from GPU {} ({}), reset it (nvidia-smi -r, or reboot the node) and run "
                            "NVIDIA's field diagnostic; a GPU whose remapping failed or whose uncorrectable errors "
                            "return needs replacing",
                            gpu, info.uuid),
                std::move(details));
            // --format line's words: what failed.
            outcome.brief =
                health.remapped_rows && health.remapped_rows->failure ? "row remap failed" : "uncorrectable ECC errors";
            return outcome;
        case CheckStatus::warn:
            outcome = CheckOutcome::warn(
                reason,
                fmt::format("drain the jobs from GPU {} ({}) and reset it (nvidia-smi -r, or reboot the node) so "
                            "that the remap takes effect; running jobs go on until then",
                            gpu, info.uuid),
                std::move(details));
            outcome.brief = "row remap pending";
            return outcome;
        default:  // pass: judge_memory_health says no more
            break;
    }
    return CheckOutcome::pass(reason, std::move(details));
}

}  // namespace cumemctl::doctor
