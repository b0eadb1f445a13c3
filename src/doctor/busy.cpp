#include "doctor/busy.hpp"

#include <algorithm>

#include <unistd.h>

#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "base/setting.hpp"
#include "gpu/device/held_device.hpp"
#include "report/report.hpp"
#include "nvml/processes.hpp"
#include "util/duration.hpp"
#include "util/size.hpp"
#include "util/text_file.hpp"

namespace cumemctl::doctor {
using namespace gpu;
namespace {

std::string sentence(const Holder& h, bool with_age) {
    std::string text = nvml::describe(h.process);
    if (with_age && h.seconds_running) text += fmt::format(", running for {}", format_age(*h.seconds_running));
    return text;
}

// The remedy of a device that lacks memory while no process holds it.
constexpr const char* kNoHolderRemedy =
    "no process holds the memory that the device lacks: drain the node and reset the GPU (nvidia-smi -r); in a "
    "container, check that NVML can see the other containers' processes (nvidia-smi on the host)";

std::string list_sentence(const std::vector<Holder>& holders, bool with_age) {
    std::vector<std::string> parts;
    for (const Holder& h : holders) parts.push_back(sentence(h, with_age));
    return fmt::format("{}", fmt::join(parts, "; "));
}

// This process and its own second process (the device's importer, which may hold a context).
std::vector<pid_t> own_processes(DeviceState& device) {
    std::vector<pid_t> own{getpid()};
    if (device.importer() && device.importer()->process.running()) own.push_back(device.importer()->process.pid());
    return own;
}

// A busy device: `busy`, or with --expect-idle a failure naming the holders with their age. `holds` says
// what they hold, `call` what was seen ("cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY").
CheckOutcome held_outcome(const DoctorContext& ctx, const HeldDevice& held, CheckOutcome failed,
                          const std::string& holds, const std::string& call) {
    std::vector<Holder> holders;
    for (const nvml::GpuProcess& p : held.holders) {
        Holder h{p, std::nullopt, {}};
        std::string why;
        h.seconds_running = process_age_seconds(ctx.path("/proc"), p.pid, &why);
        if (!h.seconds_running) h.seconds_running_unavailable = why;
        holders.push_back(std::move(h));
    }
    const std::size_t n = holders.size();
    const std::string brief =
        fmt::format("{} held by {}", held.kind == HoldKind::exclusive ? "exclusive context" : "memory",
                    n == 1 ? fmt::format("pid {}", holders.front().process.pid) : fmt::format("{} processes", n));
    CheckOutcome out;
    if (!ctx.options.expect_idle) {
        out = CheckOutcome::busy(
            fmt::format("{} ({}): {}", holds, call, list_sentence(holders, false)),
            fmt::format("a job is using this GPU: doctor checks it when the GPU is free ('{}' needs no memory and "
                        "runs beside jobs); where no job should run (prolog, epilog), '{}' makes this a failure",
                        command_line(Command::doctor, {{Setting::quick}}),
                        command_line(Command::doctor, {{Setting::expect_idle}})),
            std::move(failed.evidence));
    } else {
        std::vector<std::string> pids;
        for (const Holder& h : holders) pids.push_back(std::to_string(h.process.pid));
        out = CheckOutcome::fail(
            fmt::format("{} on a GPU that should be idle ({}): {}", holds, call, list_sentence(holders, true)),
            fmt::format("a process outlived its job or runs outside the scheduler: see whose it is (ps -o "
                        "user,lstart,args -p {0}) and end it (kill {1}); if it does not end, drain the node and "
                        "reset the GPU (nvidia-smi -r)",
                        fmt::join(pids, ","), fmt::join(pids, " ")),
            std::move(failed.evidence));
    }
    out.held_by = HeldBy{std::move(holders), {}};
    out.driver = failed.driver;
    out.brief = brief;
    return out;
}

}  // namespace

bool may_be_held(std::string_view check, const CheckOutcome& outcome) {
    // host-alloc's memory is the host's, which no process on the GPU holds.
    if (outcome.status != CheckStatus::fail || !outcome.driver || check == kCheckHostAlloc) return false;
    return possible_hold(*outcome.driver).has_value();
}

CheckOutcome judge_held_check(const DoctorContext& ctx, DeviceState& device, CheckOutcome failed) {
    if (!failed.driver) return failed;
    const DeviceInfo* info = device.peek_info();
    const HeldDevice held =
        gpu::judge_held(*failed.driver, ctx.nvml, info != nullptr ? info->uuid : std::string(), own_processes(device));
    if (held.free_bytes && *held.free_bytes < kFullDeviceBytes)
        failed.reason += fmt::format(" with {} free on the device", format_size(*held.free_bytes));
    const char* what = held.kind == HoldKind::exclusive ? "its exclusive-process context" : "the device's memory";
    switch (held.verdict) {
        case HeldDevice::Verdict::not_held:
            return failed;
        case HeldDevice::Verdict::holders_unknown:
            failed.reason += fmt::format("; doctor cannot tell who holds {}: {}", what, held.why);
            failed.held_by = HeldBy{std::nullopt, held.why};
            return failed;
        case HeldDevice::Verdict::no_other_process:
            failed.reason += "; NVML lists no other process on the device";
            if (held.kind != HoldKind::exclusive) failed.remedy = kNoHolderRemedy;
            failed.held_by = HeldBy{std::vector<Holder>{}, {}};
            return failed;
        case HeldDevice::Verdict::held:
            break;
    }
    const std::string call = fmt::format("{} failed: {}", failed.driver->call, failed.driver->name);
    return held_outcome(ctx, held, std::move(failed), holds_sentence(held), call);
}

CheckOutcome judge_shared(const DoctorContext& ctx, DeviceState& device, CheckOutcome slow) {
    const DeviceInfo* info = device.peek_info();
    const HeldDevice held = holders_of(ctx.nvml, info != nullptr ? info->uuid : std::string(), own_processes(device));
    if (held.verdict != HeldDevice::Verdict::held) return slow;
    const std::size_t n = held.holders.size();
    const std::string holds = n == 1 ? "another process works beside the copies"
                                     : fmt::format("{} other processes work beside the copies", n);
    const std::string seen = slow.reason;
    CheckOutcome out = held_outcome(ctx, held, std::move(slow), holds, seen);
    out.driver.reset();
    out.brief = n == 1 ? fmt::format("shared with pid {}", held.holders.front().pid)
                       : fmt::format("shared with {} processes", n);
    return out;
}

bool names_holder(const CheckOutcome& outcome, unsigned pid) {
    if (!outcome.held_by || !outcome.held_by->holders) return false;
    const std::vector<Holder>& holders = *outcome.held_by->holders;
    return std::any_of(holders.begin(), holders.end(), [pid](const Holder& h) { return h.process.pid == pid; });
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

}  // namespace cumemctl::doctor
