#include "held_errors.hpp"

#include <unistd.h>

#include <optional>

#include "command_table.hpp"
#include "gpu/device/device_selector.hpp"
#include "gpu/device/held_device.hpp"
#include "gpu/device/locality.hpp"
#include "shared_gpu.hpp"

namespace cumemctl::cmd {

HeldScope held_scope(CUmemLocationType type) {
    return gpu::is_device_memory(type) ? HeldScope::contexts_and_device_memory : HeldScope::contexts_only;
}

void judge_held_errors(Report& report, const DriverApi& api, const nvml::Library& nvml, const std::vector<int>& devices,
                       std::size_t first, HeldScope scope) {
    if (report.errors.empty()) return;
    const ExitCode decided_by_first = report.errors.front().exit_code;
    for (std::size_t i = first; i < report.errors.size(); ++i) {
        Problem& p = report.errors[i];
        if (!p.driver || !gpu::possible_hold(*p.driver)) continue;
        if (scope == HeldScope::contexts_only && !gpu::context_call(*p.driver)) continue;
        if (!p.device && devices.size() == 1) p.device = devices.front();
        if (!p.device) continue;
        const std::string uuid = gpu::device_identity(api, *p.device, &nvml).uuid;
        gpu::judge_held_problem(p, &nvml, uuid, {::getpid()});
    }
    if (report.exit_code == decided_by_first) report.exit_code = report.errors.front().exit_code;
}

void judging_holds(Report& report, const DriverApi& api, const nvml::Library& nvml, const std::vector<int>& devices,
                   const std::function<void()>& work, HeldScope scope) {
    const std::size_t first = report.errors.size();
    std::optional<SharedGpuWatch> watch;
    if (running_does(Does::measures)) watch.emplace(api, nvml, devices, report.command);
    try {
        work();
        if (watch) watch->report_to(report);
    } catch (const Error& e) {
        if (watch) watch->forget();
        report.add_error(e.problem());  // a failed measurement's holders are the judgement's to name
    }
    judge_held_errors(report, api, nvml, devices, first, scope);
}

}  // namespace cumemctl::cmd
