// The xid check: the Xids the NVIDIA driver logged in the kernel's ring buffer since boot, each mapped
// to its GPU by the PCI bus id in the line and judged by NVIDIA's meaning (xid_log.hpp, docs/xid.md).
// Read from /dev/kmsg (under the sysroot, where a file stands for it), which needs root where
// kernel.dmesg_restrict is set: without it the check skips and says so. No context: part of --quick.
//
// What memory-health judges from NVML's counters (uncorrectable ECC errors, remaps pending or failed)
// is not counted again: an Xid that those counters record too (48, 63, 64, 92, 94, 95) on a GPU whose
// memory-health verdict is not a pass is listed as memory-health's and raises nothing here.
#include <algorithm>
#include <chrono>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "doctor/registry.hpp"
#include "doctor/xid_log.hpp"
#include "nvml/memory_health.hpp"
#include "report/gpu_name.hpp"
#include "util/host.hpp"
#include "util/text_file.hpp"

namespace cumemctl::doctor {
namespace {

// One GPU of the node as the check names it.
struct XidGpu {
    std::string name;  // nvidia0 (as doctor names GPUs), else the bus id
    std::string uuid;  // "" where CUDA does not see it
    std::optional<int> ordinal;
};

// The bus id without its function: the driver's Xid lines leave it out.
std::string bus_key(const std::string& bus) {
    return bus.substr(0, bus.rfind('.'));
}

// The GPU a bus id names: one of the devices doctor examines, else the bus id (a GPU that fell off the
// bus is one CUDA no longer sees).
XidGpu gpu_at(DoctorContext& ctx, const std::string& bus) {
    for (DeviceState* d : ctx.devices) {
        const gpu::DeviceInfo* info = d->peek_info();
        if (info == nullptr || info->pci_bus_id.empty() || bus_key(info->pci_bus_id) != bus_key(bus)) continue;
        // NVML's index (nvidia-smi's), as every doctor result names the GPU; the info holds it only where
        // devices asked NVML.
        std::optional<unsigned> index = info->nvml_index;
        if (!index && ctx.nvml != nullptr && ctx.nvml->loaded()) index = ctx.nvml->index_of(info->uuid);
        return {gpu_name(index, info->pci_bus_id, info->ordinal), info->uuid, info->ordinal};
    }
    return {bus, "", std::nullopt};
}

// Whether memory-health's verdict on the GPU (NVML's counters) is not a pass: it then judges what
// those counters record.
bool memory_health_judges(DoctorContext& ctx, const XidGpu& gpu) {
    if (gpu.uuid.empty() || ctx.nvml == nullptr || !ctx.nvml->loaded()) return false;
    std::string why;
    const auto handle = ctx.nvml_device(gpu.uuid, why);
    if (!handle) return false;
    return nvml::judge_memory_health(nvml::query_memory_health(*ctx.nvml, *handle)).status != CheckStatus::pass;
}

// The node's boot time (btime of /proc/stat), in seconds since the epoch; nullopt where it does not say.
std::optional<long long> boot_time(const DoctorContext& ctx) {
    std::istringstream stat(try_read_text_file(ctx.path("/proc/stat")).value_or(""));
    std::string key;
    long long value = 0;
    while (stat >> key) {
        if (key == "btime" && stat >> value) return value;
        stat.ignore(1 << 16, '\n');
    }
    return std::nullopt;
}

// The Xids of one kind on one GPU.
struct XidGroup {
    XidGpu gpu;
    int xid = 0;
    const XidMeaning* meaning = nullptr;
    int count = 0;
    std::optional<double> last;  // seconds after boot
    std::string last_text;
    bool memory_health = false;  // memory-health judges it (see above)
};

int severity(const XidGroup& g) {
    if (g.meaning == nullptr || g.memory_health) return 0;
    return g.meaning->kind == XidKind::hardware ? 2 : 1;
}

std::string last_time(const XidGroup& g, const std::optional<long long>& boot) {
    if (!g.last) return "unknown";
    if (!boot) return fmt::format("{:.0f} s after boot", *g.last);
    return utc_timestamp(
        std::chrono::system_clock::time_point(std::chrono::seconds(*boot + static_cast<long long>(*g.last))));
}

XidEntry group_entry(const XidGroup& g, const std::optional<long long>& boot) {
    XidEntry e;
    e.gpu = g.gpu.name, e.device = g.gpu.ordinal, e.xid = g.xid, e.count = g.count;
    if (g.meaning) e.kind = std::string(xid_kind_name(g.meaning->kind)), e.meaning = std::string(g.meaning->meaning);
    e.judged_by = g.meaning == nullptr ? "none" : g.memory_health ? "memory-health" : "xid";
    e.last_seconds_after_boot = g.last, e.last_time = last_time(g, boot);
    if (!g.last_text.empty()) e.last_text = g.last_text;
    return e;
}

std::string group_text(const XidGroup& g, const std::optional<long long>& boot) {
    return fmt::format("Xid {} on {} {} time{}, last {}: {}", g.xid, g.gpu.name, g.count, g.count == 1 ? "" : "s",
                       last_time(g, boot), g.meaning ? g.meaning->meaning : std::string_view("not judged"));
}

}  // namespace

CheckOutcome check_xid(DoctorContext& ctx, DeviceState*) {
    const std::string path = ctx.path("/dev/kmsg");
    std::string text;
    try {
        text = read_kernel_log(path);
    } catch (const Error& e) {
        return CheckOutcome::skip(e.problem().message + (e.problem().remedy.empty() ? "" : "; " + e.problem().remedy),
                                  XidEvidence{path, {}, {}, {}});
    }
    const XidLog log = parse_kernel_log(text);
    const auto boot = boot_time(ctx);
    std::map<std::pair<std::string, int>, XidGroup> groups;
    for (const XidEvent& e : log.events) {
        XidGroup& g = groups[{bus_key(e.pci_bus_id), e.xid}];
        if (g.count++ == 0) {
            g.gpu = gpu_at(ctx, e.pci_bus_id);
            g.xid = e.xid;
            g.meaning = xid_meaning(e.xid);
            g.memory_health = g.meaning != nullptr && g.meaning->nvml_counted && memory_health_judges(ctx, g.gpu);
        }
        if (e.since_boot) g.last = e.since_boot;
        g.last_text = e.text;
    }
    std::vector<XidGroup> sorted;
    for (auto& [key, g] : groups) sorted.push_back(std::move(g));
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const XidGroup& a, const XidGroup& b) { return severity(a) > severity(b); });
    XidEvidence details{path, log.records, log.from_boot, std::vector<XidEntry>{}};
    for (const auto& g : sorted) details.xids->push_back(group_entry(g, boot));
    const std::string reach =
        log.from_boot ? "since boot" : "in the part of the log still held (older records overwritten)";
    if (sorted.empty() || severity(sorted.front()) == 0) {
        const std::size_t others = sorted.size();
        return CheckOutcome::pass(others == 0
                                      ? fmt::format("no Xid {} ({} records read)", reach, log.records)
                                      : fmt::format("no Xid this check judges {}; {} other{} listed ({} records read)",
                                                    reach, others, others == 1 ? "" : "s", log.records),
                                  std::move(details));
    }
    const XidGroup& worst = sorted.front();
    std::vector<std::string> judged;
    for (const auto& g : sorted) {
        if (severity(g) > 0) judged.push_back(group_text(g, boot));
    }
    const std::string reason = fmt::format("{}: {}", reach, fmt::join(judged, "; "));
    const std::string remedy = fmt::format("{}: {}", worst.gpu.name, worst.meaning->action);
    CheckOutcome o = severity(worst) == 2 ? CheckOutcome::fail(reason, remedy, std::move(details))
                                          : CheckOutcome::warn(reason, remedy, std::move(details));
    o.brief = fmt::format("Xid {} on {} x{}", worst.xid, worst.gpu.name, worst.count);
    return o;
}

}  // namespace cumemctl::doctor
