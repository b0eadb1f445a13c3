// Whether this driver and a device have CUDA 13.3 logical endpoints: the driver's entry points (as
// cuGetProcAddress answered for them) and the four device attributes. Used by le-bind before it
// touches anything, and by doctor to report support per device.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "cuda/driver.hpp"

namespace cumemctl::gpu {

// What the driver says about logical endpoints as a whole.
struct LeDriverSupport {
    bool available = false;             // every logical endpoint entry point resolved
    int driver_version = 0;             // cuDriverGetVersion
    std::string missing;                // the first entry point that did not resolve, empty when available
    std::optional<EntryLookup> lookup;  // what cuGetProcAddress answered for `missing` (or for
                                        // cuLogicalEndpointIdReserve when available); none for tables
    std::string lookup_result;          // the lookup's CUresult by name: "CUDA_ERROR_INVALID_VALUE"
    std::string message;                // "this driver (13.0) has no logical endpoints; they need 13.3"
};

// Reads the driver's logical endpoint entry points. Compares versions with le::kVersion only.
LeDriverSupport le_driver_support(const Driver& driver);

// Throws Error (unavailable, exit 3) with support.message when the driver has no logical endpoints.
void require_logical_endpoints(const LeDriverSupport& support);

// Support of one device: supported, not supported, or unknown (a driver older than 13.3, or an
// attribute the driver does not answer).
enum class LeSupport { supported, not_supported, unknown };

// One device's logical endpoint support and the attributes it rests on (nullopt: not answered).
struct LeDeviceSupport {
    int device = 0;
    LeSupport state = LeSupport::unknown;
    std::string reason;               // why, in words, naming the driver version where it matters
    std::optional<int> unicast;       // CU_DEVICE_ATTRIBUTE_LOGICAL_ENDPOINT_UNICAST_SUPPORTED (153)
    std::optional<int> multicast;     // ..._MULTICAST_SUPPORTED (154)
    std::optional<int> counted_ops;   // ..._COUNTED_OPS_SUPPORTED (155)
    std::optional<int> owner_access;  // ..._UNICAST_ACCESS_ON_OWNER_DEVICE_SUPPORTED (156)
};

// Support of `device`: unknown on a driver without logical endpoints (naming its version), else from
// the attributes (unicast or multicast supported -> supported; both 0 -> not supported). An attribute
// the driver refuses with an error other than "invalid value" makes it unknown with that error.
LeDeviceSupport le_device_support(const Driver& driver, const LeDriverSupport& drv, int device);

}  // namespace cumemctl::gpu
