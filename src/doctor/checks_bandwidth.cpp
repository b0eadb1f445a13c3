// The checks of the paths memory moves on, against the limits the GPU reports (gpu/bandwidth): the
// PCIe link's width and generation (pcie-link), a short copy each way between host and device
// (host-bandwidth), and a device->device copy in HBM (memory-bandwidth).
#include <algorithm>

#include <mutex>

#include <fmt/format.h>

#include "base/setting.hpp"
#include "doctor/busy.hpp"
#include "doctor/registry.hpp"
#include "gpu/bandwidth/copy_bandwidth.hpp"
#include "gpu/bandwidth/limits.hpp"
#include "gpu/device/devices.hpp"

namespace cumemctl::doctor {
using namespace gpu;
namespace {

// The copies pcie-link reads the link under, and how long it reads at most: long enough for an idle
// link to train up and be read many times.
constexpr std::uint64_t kLoadCopyBytes = 8ULL << 20;
constexpr double kLoadSeconds = 0.02;
// The copies host-bandwidth and memory-bandwidth time: each way well within 50 ms at a tenth of Gen5 x16.
constexpr std::uint64_t kCheckCopyBytes = 32ULL << 20;
constexpr int kCheckCopies = 4;

// Held while a check's copies run: doctor examines each GPU on a thread of its own, and GPUs that
// share a PCIe switch's uplink (two to a switch on HGX boards) would each measure half of it if their
// copies ran at once. One GPU's copies at a time, as `bandwidth` measures them.
std::mutex& copies_lock() {
    static std::mutex lock;
    return lock;
}

std::optional<unsigned> max_of(std::optional<unsigned> a, std::optional<unsigned> b) {
    if (!a) return b;
    if (!b) return a;
    return std::max(*a, *b);
}

nlohmann::json opt(std::optional<unsigned> v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// NVML's device for a check, or the skip that says why not.
std::optional<nvml::Device> nvml_of(DoctorContext& ctx, DeviceState& device, CheckOutcome& skipped) {
    if (ctx.nvml == nullptr || !ctx.nvml->loaded()) {
        const std::string why = ctx.nvml == nullptr ? "NVML was not loaded" : ctx.nvml->info().error;
        skipped = CheckOutcome::skip(fmt::format("no NVML to ask: {}", why), {{"nvml_error", why}});
        return std::nullopt;
    }
    std::string why;
    auto handle = ctx.nvml_device(device.info().uuid, why);
    if (!handle) skipped = CheckOutcome::skip(why, {{"nvml_error", why}});
    return handle;
}

// The generation and width the link ran at while copies kept it busy, read until it reads the
// maximum or the time allowed has passed; with the replay counter after them.
nvml::PcieLink link_under_load(DoctorContext& ctx, DeviceState& device, nvml::Device handle, const nvml::PcieLink& link,
                               double& copy_gbps) {
    device.context();
    // Batches of about 2 ms at the link's maximum, two queued: a link at its maximum is read within
    // a few milliseconds, a slow one keeps the copies within kLoadSeconds of the maximum's time.
    const double limit = pcie_gbps(*link.max_generation, *link.max_width).value_or(63.0);
    const int batch = std::max(1, static_cast<int>(limit * 1e9 * 0.002 / static_cast<double>(kLoadCopyBytes)));
    nvml::PcieLink seen;
    const std::lock_guard<std::mutex> one_gpu_at_a_time(copies_lock());
    const CopyFigure copy = copy_while(device.api(), kLoadCopyBytes, batch, kLoadSeconds, [&] {
        const nvml::PcieLink now = nvml::query_pcie_now(*ctx.nvml, handle);
        seen.generation = max_of(seen.generation, now.generation);
        seen.width = max_of(seen.width, now.width);
        return seen.generation.value_or(0) >= *link.max_generation && seen.width.value_or(0) >= *link.max_width;
    });
    copy_gbps = copy.gbps();
    seen.replay_counter = nvml::query_pcie_now(*ctx.nvml, handle).replay_counter;
    return seen;
}

constexpr const char* kWidthRemedy =
    "the link trained narrower than it can: drain the node, reseat the GPU (and its riser or cable), try "
    "another slot, and check the BIOS's PCIe bifurcation settings for the slot";
constexpr const char* kGenerationRemedy =
    "the link trained slower than it can: check the BIOS's PCIe speed setting for the slot (Auto, or the "
    "generation the GPU supports), reseat the GPU and its riser, and try another slot";
constexpr const char* kReplayRemedy =
    "replays are retransmissions after link errors: a marginal riser, cable or slot; reseat them and watch "
    "the counter (nvidia-smi -q -d PCIE); a counter that keeps rising needs the riser or slot replaced";

// The verdict of a PCIe link: width below the maximum fails; generation below it fails when read under
// load (or says that only an idle link was seen); replays during the check warn.
CheckOutcome judge_link(const nvml::PcieLink& link, const nvml::PcieLink& under_load, bool loaded,
                        std::optional<unsigned> replays_before, nlohmann::json details) {
    const unsigned max_gen = *link.max_generation, max_width = *link.max_width;
    const unsigned width = under_load.width.value_or(link.width.value_or(0));
    const unsigned gen = under_load.generation.value_or(link.generation.value_or(0));
    const std::string limit = fmt::format("the link's maximum {}", pcie_text(max_gen, max_width));
    std::string gpu_note;
    if (link.gpu_max_generation && *link.gpu_max_generation > max_gen)
        gpu_note = fmt::format("; the slot limits it (the GPU can do Gen{})", *link.gpu_max_generation);
    if (width < max_width) {
        CheckOutcome o =
            CheckOutcome::fail(fmt::format("PCIe link at x{} of x{} ({}{})", width, max_width, limit, gpu_note),
                               kWidthRemedy, std::move(details));
        o.brief = fmt::format("PCIe x{} of x{}", width, max_width);
        return o;
    }
    if (gen < max_gen && loaded) {
        CheckOutcome o = CheckOutcome::fail(
            fmt::format("PCIe link at Gen{} under load, of Gen{} ({}{})", gen, max_gen, limit, gpu_note),
            kGenerationRemedy, std::move(details));
        o.brief = fmt::format("PCIe Gen{} of Gen{}", gen, max_gen);
        return o;
    }
    std::string reason = fmt::format("PCIe {} ({}{})", pcie_text(gen, width), limit, gpu_note);
    if (gen < max_gen) reason += fmt::format("; idle at Gen{}: a quick run reads the link only idle", gen);
    if (replays_before && under_load.replay_counter && *under_load.replay_counter > *replays_before) {
        CheckOutcome o = CheckOutcome::warn(fmt::format("{}; the replay counter rose by {} during the check", reason,
                                                        *under_load.replay_counter - *replays_before),
                                            kReplayRemedy, std::move(details));
        o.brief = "PCIe replays";
        return o;
    }
    return CheckOutcome::pass(reason, std::move(details));
}

// The C2C link of Grace: every link active passes; some down warns; none active fails; links whose
// state NVML did not give are said, never counted as down.
CheckOutcome judge_c2c(const nvml::C2cLink& c2c, nlohmann::json details) {
    details["c2c"] = {{"links", c2c.links},
                      {"active_links", c2c.active_links},
                      {"unknown_links", c2c.unknown_links},
                      {"max_mbps", c2c.max_mbps}};
    const unsigned down = c2c.links - c2c.active_links - c2c.unknown_links;
    const std::string unknown =
        c2c.unknown_links == 0 ? "" : fmt::format("; NVML gave no state for {}", c2c.unknown_links);
    constexpr const char* kRemedy =
        "drain the node and reset the GPU; a C2C link that stays down needs the board serviced";
    if (c2c.active_links == 0 && down > 0) {
        return CheckOutcome::fail(
            fmt::format("the host link is C2C: none of its {} links is active{}", c2c.links, unknown), kRemedy,
            std::move(details));
    }
    if (c2c.active_links == 0) {
        return CheckOutcome::skip(fmt::format("the host link is C2C: NVML gave no state for its {} links", c2c.links),
                                  std::move(details));
    }
    if (down > 0) {
        return CheckOutcome::warn(
            fmt::format("the host link is C2C: {} of {} links active{}", c2c.active_links, c2c.links, unknown), kRemedy,
            std::move(details));
    }
    return CheckOutcome::pass(fmt::format("the host link is C2C: {} links active, {:.0f} GB/s{}", c2c.active_links,
                                          static_cast<double>(c2c.max_mbps) / 1000, unknown),
                              std::move(details));
}

}  // namespace

CheckOutcome check_pcie_link(DoctorContext& ctx, DeviceState* device) {
    CheckOutcome skipped;
    const auto handle = nvml_of(ctx, *device, skipped);
    if (!handle) return skipped;
    const nvml::LinkInfo info = nvml::query_link_info(*ctx.nvml, *handle);
    const nvml::PcieLink& link = info.pcie;
    nlohmann::json details{{"generation", opt(link.generation)},
                           {"width", opt(link.width)},
                           {"max_generation", opt(link.max_generation)},
                           {"max_width", opt(link.max_width)},
                           {"gpu_max_generation", opt(link.gpu_max_generation)},
                           {"replay_counter", opt(link.replay_counter)}};
    if (info.c2c && info.c2c->links > 0) return judge_c2c(*info.c2c, std::move(details));
    if (!link.max_generation || !link.max_width || !link.generation || !link.width) {
        std::string why = "NVML does not report the PCIe link";
        for (const auto& [field, text] : info.unavailable) {
            if (field.starts_with("pcie_")) {
                why += ": " + text;
                break;
            }
        }
        return CheckOutcome::skip(why, std::move(details));
    }
    nvml::PcieLink under_load;
    const bool loaded = !ctx.options.quick;
    if (loaded) {
        double gbps = 0;
        under_load = link_under_load(ctx, *device, *handle, link, gbps);
        details["generation_under_load"] = opt(under_load.generation);
        details["width_under_load"] = opt(under_load.width);
        details["load_copy_gbps"] = gbps;
        details["replay_counter_after"] = opt(under_load.replay_counter);
    }
    return judge_link(link, under_load, loaded, link.replay_counter, std::move(details));
}

namespace {

// The details key of a path's figure, as fleet reads it.
std::string figure_key(CopyPath path) {
    switch (path) {
        case CopyPath::host_to_device:
            return kDetailH2dGbps;
        case CopyPath::device_to_host:
            return kDetailD2hGbps;
        case CopyPath::device_to_device:
            return kDetailD2dGbps;
        default:
            return fmt::format("{}_gbps", path_name(path));
    }
}

// A copy's figure judged against its limit: below --bandwidth-fail fails, below --bandwidth-warn
// warns; either is busy where other processes work on the GPU (judge_shared).
CheckOutcome judge_figures(DoctorContext& ctx, DeviceState& device, const std::vector<CopyFigure>& figures,
                           const PathLimit& limit, const std::string& remedy, nlohmann::json details) {
    details[kDetailLimitGbps] = limit.gbps;
    details["limit_basis"] = limit.basis;
    std::vector<std::string> parts;
    double worst = 1e300;
    const CopyFigure* slowest = nullptr;
    for (const CopyFigure& f : figures) {
        const double ratio = f.gbps() / limit.gbps;
        details[figure_key(f.path)] = f.gbps();
        details[fmt::format("{}_ratio", path_name(f.path))] = ratio;
        parts.push_back(fmt::format("{} {:.1f} GB/s ({:.0f}%)", path_name(f.path), f.gbps(), 100 * ratio));
        if (ratio < worst) worst = ratio, slowest = &f;
    }
    const std::string reason = fmt::format("{} of {:.1f} GB/s, {}", fmt::join(parts, ", "), limit.gbps, limit.basis);
    const double warn = ctx.options.bandwidth_warn, fail = ctx.options.bandwidth_fail;
    if (slowest == nullptr || worst >= warn) {
        CheckOutcome pass = CheckOutcome::pass(reason, std::move(details));
        pass.facts.figures = figures, pass.facts.limit_gbps = limit.gbps;
        return pass;
    }
    const std::string settings =
        fmt::format("(the thresholds are {} {:g} and {} {:g} of the limit)", setting_name(Setting::bandwidth_warn),
                    warn, setting_name(Setting::bandwidth_fail), fail);
    CheckOutcome slow = worst < fail ? CheckOutcome::fail(reason, fmt::format("{} {}", remedy, settings), details)
                                     : CheckOutcome::warn(reason, fmt::format("{} {}", remedy, settings), details);
    slow.brief = fmt::format("{} {:.0f}% of limit", path_name(slowest->path), 100 * worst);
    slow.facts.figures = figures, slow.facts.limit_gbps = limit.gbps;
    return judge_shared(ctx, device, std::move(slow));
}

}  // namespace

namespace {

// What a copy check measures and says: the host paths or HBM.
struct CopyCheck {
    bool host = true;
    std::uint64_t size = kCheckCopyBytes;
    const char* unknown;  // "the host link's limit is unknown"
    const char* remedy;
};

// A copy check: the path's limit (a skip where it is unknown), a short copy, its verdict.
CheckOutcome copy_check(DoctorContext& ctx, DeviceState& device, const CopyCheck& what) {
    const DeviceLimits limits = device_limits(device.api(), device.ordinal(), ctx.nvml, device.info().uuid);
    const std::optional<PathLimit>& limit = what.host ? limits.host : limits.memory;
    if (!limit)
        return CheckOutcome::skip(fmt::format("{}: {}", what.unknown, what.host ? limits.host_why : limits.memory_why));
    device.context();
    CopyRequest request;
    request.size = what.size, request.iterations = kCheckCopies;
    request.host = what.host, request.both = false, request.device = !what.host;
    std::vector<CopyFigure> figures;
    {
        const std::lock_guard<std::mutex> one_gpu_at_a_time(copies_lock());
        measure_copies(device.api(), device.ordinal(), request, figures);
    }
    return judge_figures(ctx, device, figures, *limit, what.remedy,
                         {{"size_bytes", request.size}, {"iterations", request.iterations}});
}

}  // namespace

CheckOutcome check_host_bandwidth(DoctorContext& ctx, DeviceState* device) {
    return copy_check(ctx, *device,
                      {true, kCheckCopyBytes, "the host link's limit is unknown",
                       "a host<->device path this slow has a slow link (see pcie-link) or host memory far from the "
                       "GPU: compare 'cumemctl bandwidth' on this GPU with its neighbours, and check the link, the "
                       "NUMA placement and the BIOS's power settings"});
}

CheckOutcome check_memory_bandwidth(DoctorContext& ctx, DeviceState* device) {
    return copy_check(ctx, *device,
                      {false, kCheckCopyBytes * 4, "the memory's limit is unknown",
                       "HBM this slow is throttled or failing: check the clocks and their throttle reasons "
                       "(nvidia-smi -q -d PERFORMANCE,CLOCK), then run 'cumemctl memtest' and NVIDIA's field "
                       "diagnostic"});
}

}  // namespace cumemctl::doctor
