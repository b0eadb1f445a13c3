#include "gpu/device/held_device.hpp"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cuda/driver_api.hpp"
#include "cuda/driver_call.hpp"
#include "nvml/memory_health.hpp"
#include "nvml/processes.hpp"
#include "util/size.hpp"

namespace cumemctl::gpu {
namespace {

// The entry points that make a context (cumemctl makes no cuCtxCreate context).
constexpr EntryPoint kContextCalls[] = {"cuDevicePrimaryCtxRetain", "cuGreenCtxCreate"};

}  // namespace

bool context_call(const DriverFailure& failure) {
    return std::any_of(std::begin(kContextCalls), std::end(kContextCalls),
                       [&](EntryPoint e) { return failed_at(failure, e); });
}

std::optional<HoldKind> possible_hold(const DriverFailure& failure) {
    switch (result_of(failure)) {
        case CUDA_ERROR_OUT_OF_MEMORY:
            if (address_space_exhausted(failure)) return std::nullopt;  // this process's, no other's
            return HoldKind::memory;
        case CUDA_ERROR_DEVICE_UNAVAILABLE:
            return HoldKind::exclusive;
        case CUDA_ERROR_UNKNOWN:
            if (context_call(failure)) return HoldKind::memory;
            return std::nullopt;
        default:
            return std::nullopt;
    }
}

HeldDevice holders_of(const nvml::Library* nvml, const std::string& uuid, const std::vector<pid_t>& own) {
    HeldDevice held;
    held.verdict = HeldDevice::Verdict::holders_unknown;
    const std::optional<nvml::Device> device = nvml::find_device(nvml, uuid, held.why);
    if (!device) return held;
    const nvml::ProcessList list = nvml::list_processes(*nvml, *device);
    if (!list.listed) {
        held.why = list.why;
        return held;
    }
    for (const GpuProcess& p : list.processes) {
        const auto mine = [&](pid_t pid) { return p.pid == static_cast<unsigned>(pid); };
        if (std::none_of(own.begin(), own.end(), mine)) held.holders.push_back(p);
    }
    held.why.clear();
    held.verdict = held.holders.empty() ? HeldDevice::Verdict::no_other_process : HeldDevice::Verdict::held;
    return held;
}

HeldDevice judge_held(const DriverFailure& failure, const nvml::Library* nvml, const std::string& uuid,
                      const std::vector<pid_t>& own) {
    const std::optional<HoldKind> kind = possible_hold(failure);
    if (!kind) return {};
    std::optional<std::uint64_t> free_bytes;
    if (result_of(failure) == CUDA_ERROR_UNKNOWN) {
        // An unknown error is a full device's only where NVML says the device is all but full.
        std::string why;
        if (const auto device = nvml::find_device(nvml, uuid, why))
            free_bytes = nvml::query_memory_figures(*nvml, *device).free;
        if (!free_bytes || *free_bytes >= kFullDeviceBytes) {
            HeldDevice roomy;
            roomy.free_bytes = free_bytes;
            return roomy;
        }
    }
    HeldDevice held = holders_of(nvml, uuid, own);
    held.kind = *kind;
    held.free_bytes = free_bytes;
    return held;
}

std::string holds_sentence(const HeldDevice& held) {
    const std::size_t n = held.holders.size();
    return fmt::format("{} hold{} {}", n == 1 ? "another process" : fmt::format("{} other processes", n),
                       n == 1 ? "s" : "",
                       held.kind == HoldKind::exclusive ? "its exclusive-process context" : "the device's memory");
}

std::string holders_sentence(const std::vector<GpuProcess>& holders) {
    std::vector<std::string> parts;
    for (const GpuProcess& p : holders) parts.push_back(nvml::describe(p));
    return fmt::format("{}", fmt::join(parts, "; "));
}

void mark_held(Problem& problem, std::vector<GpuProcess> holders) {
    problem.exit_code = ExitCode::unavailable;
    problem.kind = ProblemKind::busy;
    problem.held_by = std::move(holders);
}

HeldDevice judge_held_problem(Problem& problem, const nvml::Library* nvml, const std::string& uuid,
                              const std::vector<pid_t>& own) {
    if (!problem.driver) return {};
    HeldDevice held = judge_held(*problem.driver, nvml, uuid, own);
    const std::string call = fmt::format("{} failed: {}", problem.driver->call, problem.driver->name);
    if (held.verdict == HeldDevice::Verdict::held) {
        mark_held(problem, held.holders);
        problem.cause = fmt::format("{} ({}): {}", holds_sentence(held), call, holders_sentence(held.holders));
        if (held.free_bytes) problem.cause += fmt::format("; {} free on the device", format_size(*held.free_bytes));
        problem.remedy = kHeldRemedy;
    } else if (held.verdict == HeldDevice::Verdict::holders_unknown) {
        const std::string what =
            held.kind == HoldKind::exclusive ? "its exclusive-process context" : "the device's memory";
        const std::string more = fmt::format("cumemctl cannot tell who holds {}: {}", what, held.why);
        problem.cause = problem.cause.empty() ? more : fmt::format("{}; {}", problem.cause, more);
    }
    return held;
}

}  // namespace cumemctl::gpu
