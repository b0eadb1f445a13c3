#include "doctor/busy.hpp"

#include <unistd.h>

#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "gpu/diagnosis/diagnosis.hpp"
#include "nvml/memory_health.hpp"
#include "nvml/processes.hpp"
#include "util/size.hpp"
#include "util/text_file.hpp"

namespace cumemctl::doctor {
using namespace gpu;
namespace {

// One process NVML lists, with its age from /proc where it is there, for the details and the reason.
struct Holder {
    nvml::GpuProcess process;
    std::optional<double> age;
    std::string age_why;
};

std::string sentence(const Holder& h, bool with_age) {
    std::string text = nvml::describe(h.process);
    if (with_age && h.age) text += fmt::format(", running for {}", format_age(*h.age));
    return text;
}

std::string list_sentence(const std::vector<Holder>& holders, bool with_age) {
    std::vector<std::string> parts;
    for (const Holder& h : holders) parts.push_back(sentence(h, with_age));
    return fmt::format("{}", fmt::join(parts, "; "));
}

nlohmann::json holders_json(const std::vector<Holder>& holders) {
    nlohmann::json list = nlohmann::json::array();
    for (const Holder& h : holders) {
        nlohmann::json j = nvml::to_json(h.process);
        j["seconds_running"] = h.age ? nlohmann::json(*h.age) : nlohmann::json(nullptr);
        if (!h.age) j["seconds_running_unavailable"] = h.age_why;
        list.push_back(std::move(j));
    }
    return list;
}

// The device in NVML (found by its UUID), or nullopt with `why`.
std::optional<nvml::Device> nvml_device_of(const DoctorContext& ctx, DeviceState& device, std::string& why) {
    const DeviceInfo* info = device.peek_info();
    return ctx.nvml_device(info != nullptr ? info->uuid : std::string(), why);
}

// The processes other than this one that NVML lists on the device, or nullopt with `why`.
std::optional<std::vector<nvml::GpuProcess>> others_on(const DoctorContext& ctx, DeviceState& device,
                                                       std::string& why) {
    const auto handle = nvml_device_of(ctx, device, why);
    if (!handle) return std::nullopt;
    const nvml::ProcessList list = nvml::list_processes(*ctx.nvml, *handle);
    if (!list.listed) {
        why = list.why;
        return std::nullopt;
    }
    // Not this process, nor its own second process (the device's importer, which may hold a context).
    std::vector<nvml::GpuProcess> others = nvml::other_processes(list, getpid());
    if (device.importer() && device.importer()->process.running()) {
        std::erase_if(others, [pid = device.importer()->process.pid()](const nvml::GpuProcess& p) {
            return p.pid == static_cast<unsigned>(pid);
        });
    }
    return others;
}

// The device's free memory as NVML says it, or nullopt where NVML cannot.
std::optional<std::uint64_t> nvml_free_bytes(const DoctorContext& ctx, DeviceState& device) {
    std::string why;
    const auto handle = nvml_device_of(ctx, device, why);
    if (!handle) return std::nullopt;
    return nvml::query_memory_figures(*ctx.nvml, *handle).free;
}

}  // namespace

bool may_be_held(std::string_view check, const CheckOutcome& outcome) {
    if (outcome.status != CheckStatus::fail || !outcome.driver || check == "host-alloc") return false;
    // cuMemAddressReserve's out of memory is this process's address space, which no one else holds.
    if (gpu::address_space_exhausted(*outcome.driver)) return false;
    // Seen on the H200 (run 15): with 64 MiB left on the device, cuDevicePrimaryCtxRetain answered
    // CUDA_ERROR_UNKNOWN in one run and CUDA_ERROR_OUT_OF_MEMORY in the next; judge_held asks for the
    // device's free memory before it takes such an answer for a full device.
    const bool context_call =
        outcome.driver->call == "cuDevicePrimaryCtxRetain" || outcome.driver->call == "cuCtxCreate";
    return outcome.driver->name == "CUDA_ERROR_OUT_OF_MEMORY" ||
           outcome.driver->name == "CUDA_ERROR_DEVICE_UNAVAILABLE" ||
           (context_call && outcome.driver->name == "CUDA_ERROR_UNKNOWN");
}

CheckOutcome judge_held(const DoctorContext& ctx, DeviceState& device, CheckOutcome failed) {
    if (failed.driver && failed.driver->name == "CUDA_ERROR_UNKNOWN") {
        // An unknown error is a full device's only where NVML says the device is all but full.
        const std::optional<std::uint64_t> free_bytes = nvml_free_bytes(ctx, device);
        if (!free_bytes || *free_bytes >= kFullDeviceBytes) return failed;
        failed.reason += fmt::format(" with {} free on the device", format_size(*free_bytes));
    }
    const bool exclusive = failed.driver && failed.driver->name == "CUDA_ERROR_DEVICE_UNAVAILABLE";
    const char* what = exclusive ? "its exclusive-process context" : "the device's memory";
    std::string why;
    const auto others = others_on(ctx, device, why);
    if (!others) {
        failed.reason += fmt::format("; doctor cannot tell who holds {}: {}", what, why);
        failed.details["held_by"] = nullptr;
        failed.details["held_by_unavailable"] = why;
        return failed;
    }
    if (others->empty()) {
        failed.reason += fmt::format("; NVML lists no other process on the device");
        failed.remedy = exclusive
                            ? failed.remedy
                            : "no process holds the memory that the device lacks: drain the node and reset the GPU "
                              "(nvidia-smi -r); in a container, check that NVML can see the other containers' "
                              "processes (nvidia-smi on the host)";
        failed.details["held_by"] = nlohmann::json::array();
        return failed;
    }
    std::vector<Holder> holders;
    for (const nvml::GpuProcess& p : *others) {
        Holder h{p, std::nullopt, {}};
        h.age = process_age_seconds(ctx.path("/proc"), p.pid, &h.age_why);
        holders.push_back(std::move(h));
    }
    nlohmann::json details = failed.details;
    details["held_by"] = holders_json(holders);
    const std::string call =
        failed.driver ? fmt::format("{} failed: {}", failed.driver->call, failed.driver->name) : "";
    const std::size_t n = holders.size();
    const std::string brief =
        fmt::format("{} held by {}", exclusive ? "exclusive context" : "memory",
                    n == 1 ? fmt::format("pid {}", holders.front().process.pid) : fmt::format("{} processes", n));
    const std::string holds = fmt::format(
        "{} hold{} {}", n == 1 ? "another process" : fmt::format("{} other processes", n), n == 1 ? "s" : "", what);
    if (!ctx.options.expect_idle) {
        CheckOutcome busy = CheckOutcome::busy(
            fmt::format("{} ({}): {}", holds, call, list_sentence(holders, false)),
            "a job is using this GPU: doctor checks it when the GPU is free ('doctor --quick' needs no memory and "
            "runs beside jobs); where no job should run (prolog, epilog), 'doctor --expect-idle' makes this a failure",
            std::move(details));
        busy.driver = failed.driver;
        busy.brief = brief;
        return busy;
    }
    std::vector<std::string> pids;
    for (const Holder& h : holders) pids.push_back(std::to_string(h.process.pid));
    CheckOutcome fail = CheckOutcome::fail(
        fmt::format("{} on a GPU that should be idle ({}): {}", holds, call, list_sentence(holders, true)),
        fmt::format("a process outlived its job or runs outside the scheduler: see whose it is (ps -o "
                    "user,lstart,args -p {0}) and end it (kill {1}); if it does not end, drain the node and reset "
                    "the GPU (nvidia-smi -r)",
                    fmt::join(pids, ","), fmt::join(pids, " ")),
        std::move(details));
    fail.driver = failed.driver;
    fail.brief = brief;
    return fail;
}

std::optional<double> process_age_seconds(const std::string& proc, unsigned pid, std::string* why) {
    auto say = [why](std::string text) {
        if (why != nullptr) *why = std::move(text);
        return std::nullopt;
    };
    const std::string stat_path = fmt::format("{}/{}/stat", proc, pid);
    const std::optional<std::string> stat = try_read_text_file(stat_path);
    const std::optional<std::string> uptime = try_read_text_file(proc + "/uptime");
    if (!stat || !uptime) {
        return say(fmt::format("{} cannot be read (in a container NVML lists the host's process ids)",
                               stat ? proc + "/uptime" : stat_path));
    }
    // The fields after the command name, which is in parentheses and may hold spaces: the start time is
    // field 22 of the line, the 20th after the ')'.
    const auto close = stat->rfind(')');
    if (close == std::string::npos) return say(stat_path + " has no command name");
    std::vector<std::string> fields;
    std::size_t pos = close + 1;
    while (pos < stat->size()) {
        while (pos < stat->size() && (*stat)[pos] == ' ') ++pos;
        const std::size_t end = stat->find(' ', pos);
        if (pos < stat->size())
            fields.push_back(stat->substr(pos, end == std::string::npos ? std::string::npos : end - pos));
        if (end == std::string::npos) break;
        pos = end;
    }
    if (fields.size() < 20) return say(stat_path + " has fewer fields than the kernel writes");
    try {
        const double ticks = std::stod(fields[19]);
        const double up = std::stod(*uptime);
        const double age = up - ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
        if (!std::isfinite(age) || age < 0) return say(stat_path + " starts after /proc/uptime");
        return age;
    } catch (const std::exception&) {
        return say(stat_path + " or /proc/uptime holds no number where the kernel writes one");
    }
}

std::string format_age(double seconds) {
    const auto s = static_cast<long long>(seconds);
    if (s < 60) return fmt::format("{} s", s);
    if (s < 3600) return fmt::format("{} min {} s", s / 60, s % 60);
    if (s < 86400) return fmt::format("{} h {} min", s / 3600, s % 3600 / 60);
    return fmt::format("{} d {} h", s / 86400, s % 86400 / 3600);
}

}  // namespace cumemctl::doctor
