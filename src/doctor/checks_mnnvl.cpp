// The multi-node NVLink checks: each GPU's place in the NVLink fabric (NVML's fabric info) and the IMEX
// domain of the node (the service, its files, nvidia-imex-ctl). A node without multi-node NVLink skips
// both with the reason, never fails (the field's false alarms: DCGM#308, NVSentinel#1471, aicr#2641).
#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include <fmt/format.h>

#include "doctor/registry.hpp"
#include "imex/imex_service.hpp"
#include "nvml/fabric_info.hpp"
#include "util/host.hpp"
#include "util/trusted_file.hpp"

namespace cumemctl::doctor {
namespace {

using nvml::FabricInfo;
using nvml::FabricVerdict;

// Whether the node is set up for IMEX: its settings file is there and, judged as root, is one that only
// root could have put there (a name another user could make says nothing; imex-domain says why).
bool imex_configured(const DoctorContext& ctx) {
    const CheckedOpen opened =
        open_checked(ctx.path(ctx.imex_config_path()), judged_as_root() ? Check::everything : Check::none);
    return !opened.unsafe && (opened.fd.valid() || opened.error == EACCES);
}

std::string fabric_remedy(int gpu, const std::string& uuid) {
    return fmt::format(
        "check the NVLink fabric of this node: 'systemctl status nvidia-fabricmanager' (and on GB200/GB300 the "
        "NVLink subnet manager, NVLSM, and the NMX controller), the Fabric section of 'nvidia-smi -q -i {}' "
        "(GPU {}), and that the node's NVLink partition is assigned and whole; drain the node until the fabric "
        "is healthy",
        uuid, gpu);
}

// The fabric check's verdict on `fabric`, the fabric info of GPU `gpu` (UUID `uuid`); `split` says how
// the node's GPUs disagree about their fabric, where they do.
CheckOutcome fabric_outcome(const FabricInfo& fabric, bool configured, int gpu, const std::string& uuid,
                            const std::string& split) {
    FabricEvidence details{fabric, uuid, configured};
    if (!split.empty()) {
        return CheckOutcome::fail(
            split,
            "every GPU of a node must be in one NVLink domain: compare the Fabric section (ClusterUUID, CliqueId, "
            "State) of 'nvidia-smi -q' on each GPU, check 'systemctl status nvidia-fabricmanager' and NVLSM, and "
            "the NVLink partition the node's GPUs were given",
            std::move(details));
    }
    const FabricVerdict verdict = nvml::judge_fabric(fabric, configured);
    switch (verdict.status) {
        case CheckStatus::skip:
            return CheckOutcome::skip(verdict.reason, std::move(details));
        case CheckStatus::warn:
            return CheckOutcome::warn(verdict.reason, fabric_remedy(gpu, uuid), std::move(details));
        case CheckStatus::fail:
            return CheckOutcome::fail(verdict.reason, fabric_remedy(gpu, uuid), std::move(details));
        default:  // pass: judge_fabric gives no other
            break;
    }
    return CheckOutcome::pass(verdict.reason, std::move(details));
}

}  // namespace

CheckOutcome check_fabric(DoctorContext& ctx, DeviceState* device) {
    if (ctx.nvml == nullptr || !ctx.nvml->loaded()) {
        const std::string why = ctx.nvml == nullptr ? "NVML was not loaded" : ctx.nvml->info().error;
        return CheckOutcome::skip(fmt::format("no NVML to ask about the NVLink fabric: {}", why), NvmlUnavailable{why});
    }
    const gpu::DeviceInfo& info = device->info();
    std::string why;
    const auto handle = ctx.nvml_device(info.uuid, why);
    if (!handle) return CheckOutcome::skip(why, NvmlUnavailable{why});
    // This GPU's entry of the node's fabric info, asked once for every check (exact UUIDs: uuids() lists
    // what device_by_uuid finds).
    const auto& node = ctx.node_fabric();
    const auto mine = std::find_if(node.begin(), node.end(), [&](const auto& g) { return g.first == info.uuid; });
    const FabricInfo fabric = mine != node.end() ? mine->second : nvml::query_fabric_info(*ctx.nvml, *handle);
    return fabric_outcome(fabric, imex_configured(ctx), device->ordinal(), info.uuid, nvml::fabric_disagreement(node));
}

}  // namespace cumemctl::doctor
