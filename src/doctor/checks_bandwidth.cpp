// The checks of the paths memory moves on, against the limits the GPU reports (gpu/bandwidth): the
// PCIe link's width and generation (pcie-link), a short copy each way between host and device
// (host-bandwidth), and a device->device copy in HBM (memory-bandwidth).
#include <algorithm>
#include <numeric>

#include <mutex>

#include <fmt/format.h>

#include "base/setting.hpp"
#include "doctor/busy.hpp"
#include "doctor/registry.hpp"
#include "gpu/bandwidth/copy_bandwidth.hpp"
#include "gpu/bandwidth/host_placement.hpp"
#include "nvml/clocks.hpp"
#include "gpu/bandwidth/limits.hpp"
#include "gpu/device/devices.hpp"
#include "util/phase_timing.hpp"

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
// How many times a copy check measures at most: once, and again while a figure stays below its warn
// threshold, so that one noisy copy (another tenant's burst, a clock ramping up) drains no node. A
// path that is slow stays slow: every attempt below the threshold is needed to warn or fail.
constexpr int kCopyAttempts = 3;

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

// NVML's device for a check, or the skip that says why not.
std::optional<nvml::Device> nvml_of(DoctorContext& ctx, DeviceState& device, CheckOutcome& skipped) {
    if (ctx.nvml == nullptr || !ctx.nvml->loaded()) {
        const std::string why = ctx.nvml == nullptr ? "NVML was not loaded" : ctx.nvml->info().error;
        skipped = CheckOutcome::skip(fmt::format("no NVML to ask: {}", why), NvmlUnavailable{why});
        return std::nullopt;
    }
    std::string why;
    auto handle = ctx.nvml_device(device.info().uuid, why);
    if (!handle) skipped = CheckOutcome::skip(why, NvmlUnavailable{why});
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
                        std::optional<unsigned> replays_before, PcieLinkEvidence details) {
    const unsigned max_gen = *link.max_generation, max_width = *link.max_width;
    const unsigned width = under_load.width.value_or(link.width.value_or(0));
    const unsigned gen = under_load.generation.value_or(link.generation.value_or(0));
    const std::string limit = fmt::format("the link's maximum {}", pcie_text(max_gen, max_width));
    std::string gpu_note;
    if (link.gpu_max_generation && *link.gpu_max_generation > max_gen)
        gpu_note = fmt::format("; the slot limits it (the GPU can do Gen{})", *link.gpu_max_generation);
    if (width < max_width) {
        CheckOutcome o = CheckOutcome::fail(
            fmt::format("PCIe link at x{} of x{} ({}{})", width, max_width, limit, gpu_note), kWidthRemedy, details);
        o.brief = fmt::format("PCIe x{} of x{}", width, max_width);
        return o;
    }
    if (gen < max_gen && loaded) {
        CheckOutcome o = CheckOutcome::fail(
            fmt::format("PCIe link at Gen{} under load, of Gen{} ({}{})", gen, max_gen, limit, gpu_note),
            kGenerationRemedy, details);
        o.brief = fmt::format("PCIe Gen{} of Gen{}", gen, max_gen);
        return o;
    }
    std::string reason = fmt::format("PCIe {} ({}{})", pcie_text(gen, width), limit, gpu_note);
    if (gen < max_gen) reason += fmt::format("; idle at Gen{}: a quick run reads the link only idle", gen);
    if (replays_before && under_load.replay_counter && *under_load.replay_counter > *replays_before) {
        CheckOutcome o = CheckOutcome::warn(fmt::format("{}; the replay counter rose by {} during the check", reason,
                                                        *under_load.replay_counter - *replays_before),
                                            kReplayRemedy, details);
        o.brief = "PCIe replays";
        return o;
    }
    return CheckOutcome::pass(reason, details);
}

// The C2C link of Grace: every link active passes; some down warns; none active fails; links whose
// state NVML did not give are said, never counted as down.
CheckOutcome judge_c2c(const nvml::C2cLink& c2c, PcieLinkEvidence details) {
    details.c2c = C2cEvidence{c2c.links, c2c.active_links, c2c.unknown_links, c2c.max_mbps};
    const unsigned down = c2c.links - c2c.active_links - c2c.unknown_links;
    const std::string unknown =
        c2c.unknown_links == 0 ? "" : fmt::format("; NVML gave no state for {}", c2c.unknown_links);
    constexpr const char* kRemedy =
        "drain the node and reset the GPU; a C2C link that stays down needs the board serviced";
    if (c2c.active_links == 0 && down > 0) {
        return CheckOutcome::fail(
            fmt::format("the host link is C2C: none of its {} links is active{}", c2c.links, unknown), kRemedy,
            details);
    }
    if (c2c.active_links == 0) {
        return CheckOutcome::skip(fmt::format("the host link is C2C: NVML gave no state for its {} links", c2c.links),
                                  details);
    }
    if (down > 0) {
        return CheckOutcome::warn(
            fmt::format("the host link is C2C: {} of {} links active{}", c2c.active_links, c2c.links, unknown), kRemedy,
            details);
    }
    return CheckOutcome::pass(fmt::format("the host link is C2C: {} links active, {:.0f} GB/s{}", c2c.active_links,
                                          static_cast<double>(c2c.max_mbps) / 1000, unknown),
                              details);
}

}  // namespace

CheckOutcome check_pcie_link(DoctorContext& ctx, DeviceState* device) {
    CheckOutcome skipped;
    const auto handle = nvml_of(ctx, *device, skipped);
    if (!handle) return skipped;
    const nvml::LinkInfo info = nvml::query_link_info(*ctx.nvml, *handle);
    const nvml::PcieLink& link = info.pcie;
    PcieLinkEvidence details;
    details.generation = link.generation, details.width = link.width;
    details.max_generation = link.max_generation, details.max_width = link.max_width;
    details.gpu_max_generation = link.gpu_max_generation, details.replay_counter = link.replay_counter;
    if (info.c2c && info.c2c->links > 0) return judge_c2c(*info.c2c, details);
    if (!link.max_generation || !link.max_width || !link.generation || !link.width) {
        std::string why = "NVML does not report the PCIe link";
        for (const auto& [field, text] : info.unavailable) {
            if (field.starts_with("pcie_")) {
                why += ": " + text;
                break;
            }
        }
        return CheckOutcome::skip(why, details);
    }
    nvml::PcieLink under_load;
    const bool loaded = !ctx.options.quick;
    if (loaded) {
        double gbps = 0;
        under_load = link_under_load(ctx, *device, *handle, link, gbps);
        details.generation_under_load = under_load.generation;
        details.width_under_load = under_load.width;
        details.load_copy_gbps = gbps;
        details.replay_counter_after = under_load.replay_counter;
    }
    return judge_link(link, under_load, loaded, link.replay_counter, details);
}

namespace {

// A path's figures as the details keep them.
PathFigures path_figures(const std::vector<CopyFigure>& figures) {
    PathFigures out;
    for (const CopyFigure& f : figures) {
        if (Maybe<Gbps>* slot = out.at(f.path)) *slot = Gbps{f.gbps()};
    }
    return out;
}

// A path's ratio to its limit, as the details keep it.
Maybe<double>* ratio_slot(CopyEvidence& e, CopyPath path) {
    switch (path) {
        case CopyPath::host_to_device:
            return &e.h2d_ratio;
        case CopyPath::device_to_host:
            return &e.d2h_ratio;
        case CopyPath::device_to_device:
            return &e.d2d_ratio;
        default:
            return nullptr;
    }
}

// A copy's figure judged against its limit: below --bandwidth-fail fails, below --bandwidth-warn
// warns; either is busy where other processes work on the GPU (judge_shared).
CheckOutcome judge_figures(DoctorContext& ctx, DeviceState& device, const std::vector<CopyFigure>& figures,
                           const PathLimit& limit, const std::string& remedy, CopyEvidence details,
                           const std::string& where = {}, const std::string& slow_note = {}) {
    details.limit_gbps = Gbps{limit.gbps};
    details.limit_basis = limit.basis;
    details.figures = path_figures(figures);
    std::vector<std::string> parts;
    double worst = 1e300;
    const CopyFigure* slowest = nullptr;
    for (const CopyFigure& f : figures) {
        const double ratio = f.gbps() / limit.gbps;
        if (Maybe<double>* slot = ratio_slot(details, f.path)) *slot = ratio;
        parts.push_back(fmt::format("{} {:.1f} GB/s ({:.0f}%)", path_name(f.path), f.gbps(), 100 * ratio));
        if (ratio < worst) worst = ratio, slowest = &f;
    }
    const std::string reason =
        fmt::format("{} of {:.1f} GB/s, {}{}", fmt::join(parts, ", "), limit.gbps, limit.basis, where);
    const double warn = ctx.options.bandwidth_warn, fail = ctx.options.bandwidth_fail;
    if (slowest == nullptr || worst >= warn) {
        return CheckOutcome::pass(reason, std::move(details));
    }
    const std::string settings =
        fmt::format("(the thresholds are {} {:g} and {} {:g} of the limit)", setting_name(Setting::bandwidth_warn),
                    warn, setting_name(Setting::bandwidth_fail), fail);
    const std::string slow_reason = reason + slow_note;
    CheckOutcome slow = worst < fail ? CheckOutcome::fail(slow_reason, fmt::format("{} {}", remedy, settings), details)
                                     : CheckOutcome::warn(slow_reason, fmt::format("{} {}", remedy, settings), details);
    slow.brief = fmt::format("{} {:.0f}% of limit", path_name(slowest->path), 100 * worst);
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

// The lowest ratio of a figure to `limit`: what decides a copy check.
double worst_ratio(const std::vector<CopyFigure>& figures, const PathLimit& limit) {
    double worst = 1e300;
    for (const CopyFigure& f : figures) worst = std::min(worst, f.gbps() / limit.gbps);
    return worst;
}

// What the clocks did while the copies ran, for the details: none where NVML was not asked.
std::optional<ClockEvidence> clock_evidence(const nvml::ClockWatchResult& seen) {
    if (seen.samples == 0) return std::nullopt;
    return ClockEvidence{seen.samples, seen.min_sm_mhz, seen.min_memory_mhz, seen.reasons,
                         nvml::slowdown_reasons(seen.reasons.value_or(0))};
}

// The clocks said beside a slow figure: "; during the copies SM at least 1410 MHz, memory 3201 MHz,
// slowed by sw_thermal_slowdown" (nothing where NVML gave none).
std::string clocks_text(const nvml::ClockWatchResult& seen) {
    if (seen.samples == 0 || (!seen.min_sm_mhz && !seen.min_memory_mhz && !seen.reasons)) return {};
    std::vector<std::string> parts;
    if (seen.min_sm_mhz) parts.push_back(fmt::format("SM at least {} MHz", *seen.min_sm_mhz));
    if (seen.min_memory_mhz) parts.push_back(fmt::format("memory {} MHz", *seen.min_memory_mhz));
    const auto slowdowns = nvml::slowdown_reasons(seen.reasons.value_or(0));
    if (seen.reasons) {
        parts.push_back(slowdowns.empty() ? std::string("no throttle reason")
                                          : fmt::format("slowed by {}", fmt::join(slowdowns, ", ")));
    }
    return fmt::format("; during the copies {}", fmt::join(parts, ", "));
}

// Where host-bandwidth's buffers were, for its reason: "; host memory on NUMA node 1 (NVML)", or why
// not; nothing for memory-bandwidth (no placement).
std::string placement_text(const std::optional<HostPlacement>& placement, const BindingOutcome& bound) {
    if (!placement) return {};
    if (!placement->node) return "; host memory on no particular NUMA node: " + placement->why_not;
    if (!bound.node) {
        return fmt::format("; host memory not placed on the GPU's NUMA node {}: {}", *placement->node, bound.error);
    }
    return fmt::format("; host memory on NUMA node {} ({})", *bound.node, placement->source);
}

// A copy check: the path's limit (a skip where it is unknown), a short copy, measured again (up to
// kCopyAttempts in all) while a figure is below the warn threshold; the best attempt is judged, and
// the details keep every attempt's figures.
CheckOutcome copy_check(DoctorContext& ctx, DeviceState& device, const CopyCheck& what) {
    // Where a link check's time goes, under CUMEMCTL_TIMING.
    const auto mark = [&](std::string_view part) {
        if (phase_timing_enabled())
            mark_phase(fmt::format("doctor: {} copies (device {}): {}", what.host ? "host" : "memory", device.ordinal(),
                                   part));
    };
    const DeviceState::Paths& paths = device.paths(ctx.nvml, ctx.options.sysroot);
    const DeviceLimits& limits = paths.limits;
    const std::optional<PathLimit>& limit = what.host ? limits.host : limits.memory;
    if (!limit)
        return CheckOutcome::skip(fmt::format("{}: {}", what.unknown, what.host ? limits.host_why : limits.memory_why));
    device.context();
    mark("paths and context");
    CopyRequest request;
    request.size = what.size, request.iterations = kCheckCopies;
    request.host = what.host, request.both = false, request.device = !what.host;
    std::string where;
    std::optional<int> node;
    if (what.host) request.placement = paths.placement;
    std::string why;
    const auto handle = ctx.nvml != nullptr ? ctx.nvml->device_by_uuid(device.info().uuid, &why) : std::nullopt;
    mark("NVML's handle");
    device.end_importer();
    std::optional<nvml::ClockWatch> clocks;
    std::vector<std::vector<CopyFigure>> attempts;
    std::size_t best = 0;
    for (int i = 0; i < kCopyAttempts; ++i) {
        {
            const std::lock_guard<std::mutex> one_gpu_at_a_time(copies_lock());
            if (handle && !clocks) clocks.emplace(*ctx.nvml, *handle);
            BindingOutcome bound;
            measure_copies(device.api(), device.ordinal(), request, attempts.emplace_back(), {}, nullptr, &bound);
            where = placement_text(request.placement, bound);
            node = bound.node;
        }
        mark(fmt::format("attempt {}", i + 1));
        if (worst_ratio(attempts.back(), *limit) > worst_ratio(attempts[best], *limit)) best = attempts.size() - 1;
        if (worst_ratio(attempts[best], *limit) >= ctx.options.bandwidth_warn) break;
    }
    const nvml::ClockWatchResult seen = clocks ? clocks->stop() : nvml::ClockWatchResult{};
    mark("clocks' watch stopped");
    CopyEvidence details;
    details.size_bytes = request.size, details.iterations = request.iterations;
    for (const auto& figures : attempts) details.attempts.push_back(path_figures(figures));
    details.most_attempts = kCopyAttempts, details.numa_node = node, details.clocks = clock_evidence(seen);
    return judge_figures(ctx, device, attempts[best], *limit, what.remedy, std::move(details), where,
                         clocks_text(seen));
}

}  // namespace

namespace {

// A GPU at once below this share of the median GPU's figure at once gets less of a shared link than its
// neighbours: named (warn).
constexpr double kShareOfMedian = 0.7;

// Every GPU of the run copying at once (made once, by the first check to get here), or why not.
const DoctorContext::HostCopiesAtOnce& host_copies_at_once(DoctorContext& ctx) {
    DoctorContext::HostCopiesAtOnce& at_once = *ctx.host_at_once;
    std::call_once(at_once.once, [&ctx, &at_once] {
        std::vector<std::optional<HostPlacement>> placements;
        for (DeviceState* d : ctx.devices) {
            at_once.ordinals.push_back(d->ordinal());
            const gpu::DeviceInfo* info = d->peek_info();
            placements.emplace_back(
                host_placement(d->api(), d->ordinal(), ctx.nvml, info ? info->uuid : "", ctx.options.sysroot));
        }
        CopyRequest request;
        request.size = kCheckCopyBytes, request.iterations = kCheckCopies;
        try {
            const std::lock_guard<std::mutex> every_gpu(copies_lock());
            at_once.figures = measure_concurrent(ctx.devices.front()->api(), at_once.ordinals, request, placements);
        } catch (const Error& e) {
            at_once.error = e.problem().message;
        }
    });
    return at_once;
}

double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t mid = v.size() / 2;
    return v.empty() ? 0 : v.size() % 2 != 0 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

// host-bandwidth's verdict with every GPU at once beside it: the figures and sums in the details and the
// reason, and a warning naming this GPU where it gets far less at once than the median GPU does.
CheckOutcome judge_at_once(DoctorContext& ctx, DeviceState& device, CheckOutcome alone) {
    const DoctorContext::HostCopiesAtOnce& at_once = host_copies_at_once(ctx);
    CopyEvidence* details = std::get_if<CopyEvidence>(&alone.evidence);
    if (details == nullptr) return alone;
    if (!at_once.error.empty()) {
        details->at_once.emplace().error = at_once.error;
        const std::string said =
            fmt::format("; with all {} GPUs at once the copies failed: {}", at_once.ordinals.size(), at_once.error);
        if (alone.status != CheckStatus::pass) {
            alone.reason += said;
            return alone;
        }
        // A copy that fails only while every GPU copies is not a pass: the node cannot say what its GPUs
        // get together, and a failed copy on a real GPU is often the first sign of a fault.
        CheckOutcome o = CheckOutcome::warn(
            alone.reason + said,
            "run 'cumemctl bandwidth --concurrent' to see which GPU's copies fail, and look for Xids in the "
            "kernel log (the xid check)",
            alone.evidence);
        o.brief = "copies at once failed";
        return o;
    }
    const auto it = std::find(at_once.ordinals.begin(), at_once.ordinals.end(), device.ordinal());
    if (it == at_once.ordinals.end()) return alone;
    const auto& mine = at_once.figures[static_cast<std::size_t>(it - at_once.ordinals.begin())];
    AtOnceEvidence j;
    j.gpus = GpuCount{at_once.ordinals.size()};
    std::vector<std::string> below;
    for (const CopyFigure& f : mine) {
        std::vector<double> all;
        for (const auto& figures : at_once.figures) {
            for (const CopyFigure& g : figures) {
                if (g.path == f.path) all.push_back(g.gbps());
            }
        }
        const double median = median_of(all), sum = std::accumulate(all.begin(), all.end(), 0.0);
        AtOncePath* slot = f.path == CopyPath::host_to_device   ? &j.h2d
                           : f.path == CopyPath::device_to_host ? &j.d2h
                                                                : nullptr;
        if (slot != nullptr) *slot = AtOncePath{Gbps{f.gbps()}, Gbps{sum}, Gbps{median}};
        if (median > 0 && f.gbps() < kShareOfMedian * median) {
            below.push_back(
                fmt::format("{} {:.1f} GB/s against the median GPU's {:.1f}", path_name(f.path), f.gbps(), median));
        }
    }
    details->at_once = std::move(j);
    const std::string said =
        fmt::format("; with all {} GPUs at once {}", at_once.ordinals.size(),
                    below.empty() ? std::string("at its share") : fmt::format("{}", fmt::join(below, ", ")));
    if (below.empty() || alone.status != CheckStatus::pass) {
        alone.reason += said;
        return alone;
    }
    CheckOutcome o = CheckOutcome::warn(
        alone.reason + said,
        "this GPU gets less of a link it shares (a PCIe switch's uplink, its socket's memory) than its neighbours "
        "do: compare 'cumemctl bandwidth --concurrent' across the node's GPUs and check the switch's link and "
        "the NUMA placement",
        alone.evidence);
    o.brief = "below its share at once";
    return judge_shared(ctx, device, std::move(o));
}

}  // namespace

CheckOutcome check_host_bandwidth(DoctorContext& ctx, DeviceState* device) {
    CheckOutcome alone =
        copy_check(ctx, *device,
                   {true, kCheckCopyBytes, "the host link's limit is unknown",
                    "a host<->device path this slow has a slow link (see pcie-link) or host memory far from the "
                    "GPU: compare 'cumemctl bandwidth' on this GPU with its neighbours, and check the link, the "
                    "NUMA placement and the BIOS's power settings"});
    if (ctx.options.quick || ctx.devices.size() < 2 || alone.status == CheckStatus::skip) return alone;
    return judge_at_once(ctx, *device, std::move(alone));
}

CheckOutcome check_memory_bandwidth(DoctorContext& ctx, DeviceState* device) {
    return copy_check(ctx, *device,
                      {false, kCheckCopyBytes * 4, "the memory's limit is unknown",
                       "HBM this slow is throttled or failing: check the clocks and their throttle reasons "
                       "(nvidia-smi -q -d PERFORMANCE,CLOCK), then run 'cumemctl memtest' and NVIDIA's field "
                       "diagnostic"});
}

}  // namespace cumemctl::doctor
