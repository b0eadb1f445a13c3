#include "nvml/processes.hpp"

#include <fmt/format.h>

#include "util/size.hpp"

namespace cumemctl::nvml {
namespace {

constexpr const char* kListV3 = "nvmlDeviceGetComputeRunningProcesses_v3";
constexpr const char* kListV1 = "nvmlDeviceGetComputeRunningProcesses";

// One listing call: asks for the count, then for the records with room for a few more (processes start
// between the two calls), again while NVML says the room was short. `Info` is the record the entry point
// fills; `take` turns one into a GpuProcess.
template <class Info, class Fn, class Take>
bool list_with(const Library& nvml, Device device, Fn fn, Take take, ProcessList& out) {
    unsigned int count = 0;
    Return r = fn(device, &count, nullptr);
    for (int attempt = 0; attempt < 4; ++attempt) {
        if (r != kSuccess && r != kErrorInsufficientSize) break;
        if (r == kSuccess && count == 0) return true;
        std::vector<Info> records(count + 8);
        count = static_cast<unsigned int>(records.size());
        r = fn(device, &count, records.data());
        if (r == kSuccess) {
            for (unsigned int i = 0; i < count && i < records.size(); ++i) out.processes.push_back(take(records[i]));
            return true;
        }
    }
    out.why = nvml.describe(out.call, r);
    return false;
}

GpuProcess from_record(unsigned pid, unsigned long long used) {
    GpuProcess p;
    p.pid = pid;
    if (used != kValueNotAvailable) p.used = used;
    return p;
}

}  // namespace

ProcessList list_processes(const Library& nvml, Device device) {
    ProcessList out;
    const Api& api = nvml.api();
    if (!nvml.loaded()) {
        out.why = nvml.info().error;
        return out;
    }
    if (api.device_get_compute_running_processes != nullptr) {
        out.call = kListV3;
        out.listed = list_with<ProcessInfo>(
            nvml, device, api.device_get_compute_running_processes,
            [](const ProcessInfo& i) { return from_record(i.pid, i.usedGpuMemory); }, out);
    } else if (api.device_get_compute_running_processes_v1 != nullptr) {
        out.call = kListV1;
        out.listed = list_with<ProcessInfoV1>(
            nvml, device, api.device_get_compute_running_processes_v1,
            [](const ProcessInfoV1& i) { return from_record(i.pid, i.usedGpuMemory); }, out);
    } else {
        out.why = fmt::format("{}: not in this NVML", kListV3);
    }
    if (api.system_get_process_name == nullptr) return out;
    for (GpuProcess& p : out.processes) {
        char name[kProcessNameBufferSize] = {};
        if (api.system_get_process_name(p.pid, name, sizeof name) == kSuccess) p.name = name;
    }
    return out;
}

std::uint64_t memory_used(const std::vector<GpuProcess>& processes) {
    std::uint64_t total = 0;
    for (const GpuProcess& p : processes) total += p.used.value_or(0);
    return total;
}

std::string describe(const GpuProcess& process) {
    std::string text = fmt::format("pid {}", process.pid);
    if (!process.name.empty()) {
        const auto slash = process.name.find_last_of('/');
        text += fmt::format(" ({})", slash == std::string::npos ? process.name : process.name.substr(slash + 1));
    }
    text += process.used ? fmt::format(" using {}", format_size(*process.used)) : " (NVML gives no memory figure)";
    return text;
}

}  // namespace cumemctl::nvml
