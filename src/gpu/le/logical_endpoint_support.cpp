#include "gpu/le/logical_endpoint_support.hpp"

#include <array>

#include <fmt/format.h>

#include "cuda/driver_call.hpp"
#include "gpu/device/devices.hpp"

namespace cumemctl::gpu {
namespace {

// The logical endpoint entry points of the driver table, by name, in the order of driver_api.hpp.
std::array<std::pair<const char*, const void*>, 12> le_entries(const DriverApi& api) {
    auto p = [](auto fn) { return reinterpret_cast<const void*>(fn); };
    return {{{"cuLogicalEndpointIdReserve", p(api.cuLogicalEndpointIdReserve)},
             {"cuLogicalEndpointIdRelease", p(api.cuLogicalEndpointIdRelease)},
             {"cuLogicalEndpointCreate", p(api.cuLogicalEndpointCreate)},
             {"cuLogicalEndpointAddDevice", p(api.cuLogicalEndpointAddDevice)},
             {"cuLogicalEndpointQuery", p(api.cuLogicalEndpointQuery)},
             {"cuLogicalEndpointGetLimits", p(api.cuLogicalEndpointGetLimits)},
             {"cuLogicalEndpointBindMem", p(api.cuLogicalEndpointBindMem)},
             {"cuLogicalEndpointBindAddr", p(api.cuLogicalEndpointBindAddr)},
             {"cuLogicalEndpointUnbind", p(api.cuLogicalEndpointUnbind)},
             {"cuLogicalEndpointExport", p(api.cuLogicalEndpointExport)},
             {"cuLogicalEndpointImport", p(api.cuLogicalEndpointImport)},
             {"cuLogicalEndpointDestroy", p(api.cuLogicalEndpointDestroy)}}};
}

}  // namespace

LeDriverSupport le_driver_support(const Driver& driver) {
    LeDriverSupport s;
    s.driver_version = driver.version();
    for (const auto& [name, fn] : le_entries(driver.api())) {
        if (fn == nullptr) {
            s.missing = name;
            break;
        }
    }
    s.available = s.missing.empty();
    const EntryLookup* l = driver.lookup(s.available ? "cuLogicalEndpointIdReserve" : s.missing);
    if (l != nullptr) {
        s.lookup = *l;
        s.lookup_result = l->result == CUDA_SUCCESS
                              ? "CUDA_SUCCESS"
                              : describe_failure(driver.api(), l->result, "cuGetProcAddress").name;
    }
    const std::string version = cuda_version_string(s.driver_version);
    if (s.available) {
        s.message = fmt::format("this driver ({}) has logical endpoints", version);
    } else if (s.driver_version < le::kVersion) {
        s.message = fmt::format("this driver ({}) has no logical endpoints; they need {}", version,
                                cuda_version_string(le::kVersion));
    } else {
        s.message = fmt::format("this driver ({}) has no logical endpoints: it lacks {}", version, s.missing);
    }
    return s;
}

void require_logical_endpoints(const LeDriverSupport& support) {
    if (support.available) return;
    std::string cause;
    if (support.lookup) {
        cause = fmt::format("cuGetProcAddress(\"{}\", version {}) returned {}, symbol status {}", support.missing,
                            support.lookup->version, support.lookup_result, proc_status_name(support.lookup->status));
    }
    throw Error(Problem{.exit_code = ExitCode::unavailable,
                        .message = support.message,
                        .cause = cause,
                        .remedy = fmt::format("logical endpoints need an NVIDIA driver with CUDA {} or newer",
                                              cuda_version_string(le::kVersion))});
}

LeDeviceSupport le_device_support(const Driver& driver, const LeDriverSupport& drv, int device) {
    LeDeviceSupport s;
    s.device = device;
    if (!drv.available) {
        s.reason = drv.message;
        return s;
    }
    try {
        const DriverApi& api = driver.api();
        s.unicast = device_attribute(api, device, le::kAttrUnicastSupported);
        s.multicast = device_attribute(api, device, le::kAttrMulticastSupported);
        s.counted_ops = device_attribute(api, device, le::kAttrCountedOpsSupported);
        s.owner_access = device_attribute(api, device, le::kAttrUnicastAccessOnOwnerSupported);
    } catch (const Error& e) {
        s.reason = fmt::format("device {}: {}", device, e.what());
        return s;
    }
    if (!s.unicast || !s.multicast) {
        s.reason = fmt::format("driver {} does not answer the logical endpoint attributes of device {}",
                               cuda_version_string(drv.driver_version), device);
    } else if (*s.unicast != 0 || *s.multicast != 0) {
        s.state = LeSupport::supported;
        s.reason = fmt::format("device {}: unicast {}, multicast {}", device, *s.unicast != 0 ? "yes" : "no",
                               *s.multicast != 0 ? "yes" : "no");
    } else {
        s.state = LeSupport::not_supported;
        s.reason = fmt::format("device {} supports neither unicast nor multicast logical endpoints", device);
    }
    return s;
}

}  // namespace cumemctl::gpu
