// The NVLink check (per device): the GPU's NVLink links up, from NVML, against the most links up on any
// other GPU of the node. A GPU with fewer links up than its peers is named and fails (a link trained
// down or lost; its GPU->GPU copies are slower by that share); GPUs with fewer links than they have by
// design, all alike (H100 PCIe: 12 of 18), pass. The limit of GPU->GPU copies follows from the same
// answer (links up x their speed, gpu/bandwidth/limits.hpp).
#include <fmt/format.h>

#include "doctor/registry.hpp"
#include "gpu/bandwidth/limits.hpp"
#include "nvml/nvlink.hpp"

namespace cumemctl::doctor {
namespace {

constexpr const char* kNvlinkRemedy =
    "drain the node and reset the GPU (nvidia-smi -r, or a reboot); links that stay down after a reset need the "
    "board or its NVSwitch serviced (nvidia-smi nvlink -s lists each link's state)";

// The most links up on any other GPU NVML lists, and which one it is (its UUID); 0 where none has NVLink.
unsigned most_among_peers(const DoctorContext& ctx, const std::string& own_uuid, std::string& which) {
    unsigned most = 0;
    for (const std::string& uuid : ctx.nvml->uuids()) {
        if (uuid == own_uuid) continue;
        std::string why;
        const auto handle = ctx.nvml->device_by_uuid(uuid, &why);
        if (!handle) continue;
        const auto peer = nvml::query_nvlink(*ctx.nvml, *handle, why);
        if (peer && peer->active > most) most = peer->active, which = uuid;
    }
    return most;
}

}  // namespace

CheckOutcome check_nvlink(DoctorContext& ctx, DeviceState* device) {
    if (ctx.nvml == nullptr || !ctx.nvml->loaded()) {
        const std::string why = ctx.nvml == nullptr ? "NVML was not loaded" : ctx.nvml->info().error;
        return CheckOutcome::skip(fmt::format("no NVML to ask: {}", why), NvmlUnavailable{why});
    }
    std::string why;
    const std::string& uuid = device->info().uuid;
    const auto handle = ctx.nvml_device(uuid, why);
    if (!handle) return CheckOutcome::skip(why, NvmlUnavailable{why});
    const auto own = nvml::query_nvlink(*ctx.nvml, *handle, why);
    if (!own) {
        NvlinkEvidence none;
        none.unavailable = why;
        return CheckOutcome::skip(fmt::format("no NVLink: {}", why), std::move(none));
    }
    NvlinkEvidence details{own->links, own->active, own->unknown, own->active_mbps, {}, {}, {}};
    std::string peer_uuid;
    const unsigned most = most_among_peers(ctx, uuid, peer_uuid);
    details.peers_most_active_links = most;
    const auto limit = gpu::nvlink_limit(own, nullptr);
    details.limit_gbps = limit ? std::optional<double>(limit->gbps) : std::nullopt;
    const std::string unknown = own->unknown == 0 ? "" : fmt::format("; NVML gave no state for {}", own->unknown);
    if (own->unknown == own->links) {
        return CheckOutcome::skip(
            fmt::format("NVML gave no state for any of the GPU's {} NVLink links: it cannot say which are up",
                        own->links),
            details);
    }
    // Links NVML gave no state for may be up: fewer than the peers' only where even all of them would not
    // make up the difference; else it cannot say, which is no pass.
    if (own->active < most && own->active + own->unknown >= most) {
        CheckOutcome o = CheckOutcome::warn(
            fmt::format("NVLink: {} of {} links up and {} of unknown state, against the {} of its peer {}: NVML "
                        "cannot say whether fewer are up",
                        own->active, own->links, own->unknown, most, peer_uuid),
            "ask again with 'nvidia-smi nvlink -s'; a link whose state NVML cannot read after a reset needs the "
            "board or its NVSwitch looked at",
            details);
        o.brief = fmt::format("NVLink {} of {}, {} unknown", own->active, own->links, own->unknown);
        return o;
    }
    if (own->active == 0) {
        CheckOutcome o = CheckOutcome::fail(
            fmt::format("none of the GPU's {} NVLink links is up{}", own->links, unknown), kNvlinkRemedy, details);
        o.brief = fmt::format("NVLink 0 of {}", own->links);
        return o;
    }
    if (own->active < most) {
        CheckOutcome o = CheckOutcome::fail(
            fmt::format("NVLink: {} of {} links up, fewer than the {} of its peer {}: GPU->GPU copies reach {} of "
                        "what its peers' do{}",
                        own->active, own->links, most, peer_uuid, fmt::format("{:.0f}%", 100.0 * own->active / most),
                        unknown),
            kNvlinkRemedy, details);
        o.brief = fmt::format("NVLink {} of {}", own->active, own->links);
        return o;
    }
    const std::string by_design = own->active < own->links ? "; fewer than it has, as on its peers: by design" : "";
    return CheckOutcome::pass(
        fmt::format("NVLink: {} of {} links up{}{}{}", own->active, own->links,
                    limit ? ", " + limit->basis.substr(limit->basis.find(" at ") + 1) : "", by_design, unknown),
        details);
}

}  // namespace cumemctl::doctor
