// The per-device checks: a context, the memory capabilities, logical endpoints.
#include <fmt/format.h>

#include "cuda/driver_call.hpp"
#include "doctor/registry.hpp"
#include "gpu/device/devices.hpp"
#include "util/size.hpp"
#include "util/stopwatch.hpp"

namespace cumemctl::doctor {
using namespace gpu;
namespace {

std::string yes_no(std::optional<int> v) {
    return !v ? "unknown" : *v != 0 ? "yes" : "no";
}

// The capabilities check's evidence: the device's identity and capabilities.
CapabilitiesEvidence capabilities_evidence(const DeviceInfo& info) {
    return {info, fmt::format("{}.{}", info.cc_major, info.cc_minor)};
}

}  // namespace

CheckOutcome check_context(DoctorContext&, DeviceState* device) {
    Stopwatch watch;
    device->context();
    const double made = watch.seconds();
    ContextEvidence details{made, {}, {}};
    const DriverApi& api = device->api();
    if (api.cuMemGetInfo == nullptr)
        return CheckOutcome::pass("context made (this driver has no cuMemGetInfo)", details);
    size_t free = 0, total = 0;
    check(api, api.cuMemGetInfo(&free, &total), "cuMemGetInfo");
    details.free_bytes = free;
    details.total_bytes = total;
    return CheckOutcome::pass(fmt::format("{} free of {}", format_size(free), format_size(total)), details);
}

CheckOutcome check_capabilities(DoctorContext&, DeviceState* device) {
    const DeviceInfo& info = device->info();
    CapabilitiesEvidence details = capabilities_evidence(info);
    const auto pools = capability_of(info, "memory_pools");
    const auto handles = capability_of(info, "pool_handle_types");
    std::string pool_text = yes_no(pools);
    if (pools.value_or(0) != 0 && handles) {
        const auto names = handle_type_names(*handles);
        if (!names.empty()) pool_text += fmt::format(" ({})", fmt::join(names, ","));
    }
    const std::string summary =
        fmt::format("VMM {}, pools {}, fabric {}, multicast {}", yes_no(capability_of(info, "vmm")), pool_text,
                    yes_no(capability_of(info, "fabric")), yes_no(capability_of(info, "multicast")));
    std::vector<std::string> missing;
    if (capability_of(info, "vmm").value_or(0) == 0) missing.emplace_back("VMM");
    if (pools.value_or(0) == 0) missing.emplace_back("memory pools");
    CheckOutcome out =
        missing.empty()
            ? CheckOutcome::pass(summary, std::move(details))
            : CheckOutcome::warn(summary,
                                 fmt::format("without {}, what needs it (cumemctl create, pools) refuses this device; "
                                             "VMM needs a driver of CUDA 10.2 or newer, pools 11.2 or newer, and a "
                                             "GPU that supports them",
                                             fmt::join(missing, " and ")),
                                 std::move(details));
    return out;
}

CheckOutcome check_logical_endpoints(DoctorContext& ctx, DeviceState* device) {
    const DeviceInfo& info = device->info();
    const int version = ctx.driver->version();
    const auto unicast = capability_of(info, "le_unicast");
    const auto multicast = capability_of(info, "le_multicast");
    EndpointsEvidence details;
    if (unicast) details.unicast = *unicast != 0;
    if (multicast) details.multicast = *multicast != 0;
    if (!unicast && !multicast) {
        return CheckOutcome::skip(version < 13030
                                      ? fmt::format("unknown: the driver is CUDA {}; logical endpoints need CUDA 13.3",
                                                    cuda_version_string(version))
                                      : "unknown: the driver does not answer the logical endpoint attributes",
                                  std::move(details));
    }
    if (unicast.value_or(0) == 0 && multicast.value_or(0) == 0) {
        return CheckOutcome::skip("not supported by this device", std::move(details));
    }
    std::vector<std::string> kinds;
    if (unicast.value_or(0) != 0) kinds.emplace_back("unicast");
    if (multicast.value_or(0) != 0) kinds.emplace_back("multicast");
    if (capability_of(info, "le_counted_ops").value_or(0) != 0) kinds.emplace_back("counted ops");
    if (capability_of(info, "le_unicast_owner_access").value_or(0) != 0) kinds.emplace_back("owner access");
    const DriverApi& api = device->api();
    std::vector<std::string> absent;
    const std::pair<const void*, const char*> entries[] = {
        {reinterpret_cast<const void*>(api.cuLogicalEndpointIdReserve), "cuLogicalEndpointIdReserve"},
        {reinterpret_cast<const void*>(api.cuLogicalEndpointCreate), "cuLogicalEndpointCreate"},
        {reinterpret_cast<const void*>(api.cuLogicalEndpointQuery), "cuLogicalEndpointQuery"},
        {reinterpret_cast<const void*>(api.cuLogicalEndpointBindMem), "cuLogicalEndpointBindMem"},
        {reinterpret_cast<const void*>(api.cuLogicalEndpointDestroy), "cuLogicalEndpointDestroy"},
    };
    for (const auto& [fn, name] : entries) {
        if (fn == nullptr) absent.emplace_back(name);
    }
    details.missing_entry_points = absent;
    const std::string supported = fmt::format("supported: {}", fmt::join(kinds, ", "));
    if (!absent.empty()) {
        return CheckOutcome::warn(
            fmt::format("{}; but the driver lacks {} of their entry points", supported, absent.size()),
            "the driver library does not match the device's answer: use the libcuda of the "
            "installed driver (CUDA 13.3 or newer)",
            std::move(details));
    }
    return CheckOutcome::pass(supported, std::move(details));
}

}  // namespace cumemctl::doctor
