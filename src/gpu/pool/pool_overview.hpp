// Every pool a device's locations have in this process: for device memory, host memory and the
// device's host NUMA node (pinned), and for managed memory with no preferred location, on the device
// and on the host: the default pool, the current pool and their attributes, or why there is none.
#pragma once

#include <optional>
#include <vector>

#include "gpu/pool/pool_access.hpp"
#include "gpu/pool/pool_attributes.hpp"
#include "base/error.hpp"

namespace cumemctl::gpu {

// The pools of one location and allocation type.
struct LocationPools {
    CUmemLocation location{};
    CUmemAllocationType alloc_type = CU_MEM_ALLOCATION_TYPE_PINNED;
    std::optional<PoolInfo> default_pool, current_pool;
    std::optional<PoolAttributes> default_attributes, current_attributes;
    bool current_is_default = false;     // meaningful when both were read
    std::optional<Problem> unavailable;  // why this location has no pool here (attribute, driver answer)
};

// The locations in report order. The device's pinned pools must be readable (errors are thrown);
// the others say why they are not available in `unavailable`. Needs no context.
std::vector<LocationPools> list_location_pools(const DriverApi& api, int device);

}  // namespace cumemctl::gpu
