// The peer-access check (node, full doctor only, several GPUs): every pair that cuDeviceCanAccessPeer
// allows maps and reads the other's memory, timed, through create --access (gpu/vmm: one allocation per
// owning GPU, granted to every GPU that may reach it, the pattern checked from each in its own context).
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "doctor/busy.hpp"
#include "doctor/registry.hpp"
#include "gpu/device/primary_context.hpp"
#include "gpu/vmm/vmm_create.hpp"
#include "imex/channel_folder.hpp"
#include "report/gpu_name.hpp"
#include "util/size.hpp"

namespace cumemctl::doctor {
using namespace gpu;
namespace {

// What each reader reads of each owner's memory: enough to time the link, little beside a job.
constexpr std::uint64_t kPeerBytes = 32ULL << 20;
// A pair below this share of the median pair's read rate is a warning.
constexpr double kSlowShare = 0.25;

// One ordered pair: `reader` maps and reads `owner`'s memory.
struct Pair {
    int reader = 0;
    int owner = 0;
    std::string reader_name, owner_name;  // as nvidia-smi -i finds them (gpu_name)
    bool allowed = false;                 // cuDeviceCanAccessPeer
    bool ok = false;                      // mapped, read and the pattern found
    double gbps = 0;                      // the reader's check of the pattern, 10^9 bytes per second
    std::string error;
    std::optional<DriverFailure> driver;  // the driver call that failed, where one did
};

std::string pair_name(const Pair& p) {
    return fmt::format("{} reading {}", p.reader_name, p.owner_name);
}

// A device as nvidia-smi -i finds it: NVML's index (of its UUID), else its bus id, else its ordinal.
std::string name_of(const DoctorContext& ctx, DeviceState& d) {
    const gpu::DeviceInfo* info = d.peek_info();
    if (info == nullptr) return gpu_name(std::nullopt, {}, d.ordinal());
    const auto index = ctx.nvml != nullptr && !info->uuid.empty() ? ctx.nvml->index_of(info->uuid) : std::nullopt;
    return gpu_name(index, info->pci_bus_id, d.ordinal());
}

PeerPair pair_evidence(const Pair& p) {
    PeerPair e{p.reader, p.owner, p.allowed, p.ok, std::nullopt, {}};
    if (p.ok) e.gbps = p.gbps;
    if (!p.error.empty()) e.error = p.error;
    return e;
}

// The owner's memory made once, granted to `readers` and checked from each: their pairs filled in.
void read_from(DoctorContext& ctx, int owner, std::vector<Pair*>& readers) {
    CreateRequest request;
    request.device = owner;
    request.size = kPeerBytes;
    request.round_up = true;
    request.map = true;
    request.verify = true;
    for (const Pair* p : readers) request.access.push_back(p->reader);
    request.imex_channel_dir = ctx.path(imex::kImexChannelDir);
    request.libcuda = ctx.driver->info().library;
    CreateResult result;
    try {
        run_create(ctx.driver->api(), request, result);
    } catch (const Error& e) {
        const Problem& problem = e.problem();
        for (Pair* p : readers) {
            p->error = problem.cause.empty() ? problem.message : problem.message + ": " + problem.cause;
            p->driver = problem.driver;
        }
        return;
    }
    for (Pair* p : readers) {
        const auto it = std::find_if(result.peer_checks.begin(), result.peer_checks.end(),
                                     [&](const DeviceCheck& c) { return c.device == p->reader; });
        if (it == result.peer_checks.end()) {
            p->error = "create gave no check from this device";
        } else if (!it->check.ok()) {
            p->error = fmt::format("{} of {} bytes did not hold the pattern", it->check.mismatches, it->check.bytes);
        } else {
            p->ok = true;
            p->gbps = it->check.check_gbps;
        }
    }
}

// Every ordered pair of the examined devices, and whether cuDeviceCanAccessPeer allows it.
std::vector<Pair> list_pairs(DoctorContext& ctx, const DriverApi& api) {
    std::vector<Pair> pairs;
    for (DeviceState* o : ctx.devices) {
        for (DeviceState* r : ctx.devices) {
            if (o == r) continue;
            int can = 0;
            const bool asked = api.cuDeviceCanAccessPeer(&can, r->ordinal(), o->ordinal()) == CUDA_SUCCESS;
            pairs.push_back(Pair{
                r->ordinal(), o->ordinal(), name_of(ctx, *r), name_of(ctx, *o), asked && can != 0, false, 0, {}, {}});
        }
    }
    return pairs;
}

// The failure for the allowed pairs that could not read: the first named, and judged as a held device
// where its owner had no memory for the allocation (runner judges device checks; this node check
// judges its owner).
CheckOutcome failed_pairs(DoctorContext& ctx, const std::vector<const Pair*>& failed, std::size_t allowed,
                          PeerEvidence details) {
    const Pair& f = *failed.front();
    CheckOutcome o = CheckOutcome::fail(
        fmt::format("{} of {} allowed pairs could not read the other's memory; {}: {}", failed.size(), allowed,
                    pair_name(f), f.error),
        "the driver says these GPUs reach each other and they cannot: check the links (nvidia-smi nvlink -s, "
        "nvidia-smi topo -m), the fabric manager on NVSwitch systems, and dmesg for Xid errors; drain the node",
        std::move(details));
    o.brief = fmt::format("{} to {} failed", f.reader_name, f.owner_name);
    o.driver = f.driver;
    if (may_be_held(kCheckPeerAccess, o)) {
        for (DeviceState* d : ctx.devices) {
            if (d->ordinal() == f.owner) return judge_held_check(ctx, *d, std::move(o));
        }
    }
    return o;
}

// The warning for pairs that cuDeviceCanAccessPeer refused or that read far below the median.
CheckOutcome degraded_pairs(const std::string& summary, const std::vector<const Pair*>& refused,
                            const std::vector<const Pair*>& slow, PeerEvidence details) {
    std::vector<std::string> notes;
    for (const Pair* p : refused) notes.push_back(pair_name(*p) + " refused by cuDeviceCanAccessPeer");
    for (const Pair* p : slow) notes.push_back(fmt::format("{} at {:.1f} GB/s", pair_name(*p), p->gbps));
    CheckOutcome o = CheckOutcome::warn(
        fmt::format("{}; but {}", summary, fmt::join(notes, ", ")),
        "on a node whose GPUs should all reach each other (nvidia-smi topo -m), a pair that cannot, or reads far "
        "below the others (under a quarter of the median pair), has a degraded link: check nvidia-smi nvlink -s "
        "and the fabric manager; on PCIe, the topology and the IOMMU (ACS) decide which pairs may",
        std::move(details));
    o.brief = !refused.empty()
                  ? fmt::format("{} to {} refused", refused.front()->reader_name, refused.front()->owner_name)
                  : fmt::format("{} to {} {:.0f} GB/s", slow.front()->reader_name, slow.front()->owner_name,
                                slow.front()->gbps);
    return o;
}

// The verdict on the measured pairs.
CheckOutcome judge_pairs(DoctorContext& ctx, const std::vector<Pair>& pairs) {
    PeerEvidence details{kPeerBytes, {}, {}};
    std::vector<double> rates;
    std::vector<const Pair*> failed, refused, slow;
    for (const Pair& p : pairs) {
        details.pairs.push_back(pair_evidence(p));
        if (!p.allowed) refused.push_back(&p);
        if (p.allowed && !p.ok) failed.push_back(&p);
        if (p.ok) rates.push_back(p.gbps);
    }
    if (rates.size() + failed.size() == 0) {
        return CheckOutcome::skip("no pair of GPUs may reach each other as peers (cuDeviceCanAccessPeer)",
                                  std::move(details));
    }
    std::sort(rates.begin(), rates.end());
    const double median = rates.empty() ? 0 : rates[rates.size() / 2];
    for (const Pair& p : pairs) {
        if (p.ok && p.gbps < kSlowShare * median) slow.push_back(&p);
    }
    details.median_gbps = median;
    if (!failed.empty()) return failed_pairs(ctx, failed, rates.size() + failed.size(), std::move(details));
    const std::string summary = fmt::format("{} pair{} read each other's memory, {:.1f} to {:.1f} GB/s", rates.size(),
                                            rates.size() == 1 ? "" : "s", rates.front(), rates.back());
    if (!refused.empty() || !slow.empty()) return degraded_pairs(summary, refused, slow, std::move(details));
    return CheckOutcome::pass(summary, std::move(details));
}

}  // namespace

CheckOutcome check_peer_access(DoctorContext& ctx, DeviceState*) {
    if (ctx.devices.size() < 2) return CheckOutcome::skip("fewer than two GPUs examined: no pair to reach");
    const DriverApi& api = ctx.driver->api();
    if (api.cuDeviceCanAccessPeer == nullptr) return CheckOutcome::skip("this driver has no cuDeviceCanAccessPeer");
    // Every device's context held for the whole check, so that the reads make no context of their own.
    std::vector<std::unique_ptr<PrimaryContext>> held;
    for (DeviceState* d : ctx.devices) {
        try {
            held.push_back(std::make_unique<PrimaryContext>(api, d->ordinal()));
        } catch (const Error& e) {
            return CheckOutcome::skip(
                fmt::format("no context on device {} (see its context check): {}", d->ordinal(), e.what()));
        }
    }
    std::vector<Pair> pairs = list_pairs(ctx, api);
    for (DeviceState* o : ctx.devices) {
        std::vector<Pair*> readers;
        for (Pair& p : pairs) {
            if (p.owner == o->ordinal() && p.allowed) readers.push_back(&p);
        }
        if (!readers.empty()) read_from(ctx, o->ordinal(), readers);
    }
    while (!held.empty()) held.pop_back();
    return judge_pairs(ctx, pairs);
}

}  // namespace cumemctl::doctor
