#include "gpu/pool/pool_overview.hpp"

#include "gpu/device/devices.hpp"

namespace cumemctl::gpu {
namespace {

// Reads the default and current pool of a location and their attributes.
void read_location(const DriverApi& api, int device, LocationPools& l) {
    l.default_pool = default_pool(api, device, l.location, l.alloc_type);
    l.default_attributes = read_pool_attributes(api, l.default_pool->handle);
    l.current_pool = current_pool(api, device, l.location, l.alloc_type);
    l.current_is_default = l.current_pool->handle == l.default_pool->handle;
    l.current_attributes =
        l.current_is_default ? l.default_attributes : read_pool_attributes(api, l.current_pool->handle);
}

// As read_location, but a failure is recorded as the reason the location has no pool.
LocationPools try_location(const DriverApi& api, int device, CUmemLocation location, CUmemAllocationType type,
                           bool check_support) {
    LocationPools l;
    l.location = location;
    l.alloc_type = type;
    try {
        if (check_support) check_pool_support(api, device, location, CU_MEM_HANDLE_TYPE_NONE);
        read_location(api, device, l);
    } catch (const Error& e) {
        l = LocationPools{location, type, {}, {}, {}, {}, false, e.problem()};
    }
    return l;
}

}  // namespace

std::vector<LocationPools> list_location_pools(const DriverApi& api, int device) {
    std::vector<LocationPools> out;
    LocationPools dev;
    dev.location = {CU_MEM_LOCATION_TYPE_DEVICE, device};
    check_pool_support(api, device, dev.location, CU_MEM_HANDLE_TYPE_NONE);
    read_location(api, device, dev);
    out.push_back(std::move(dev));
    out.push_back(try_location(api, device, {CU_MEM_LOCATION_TYPE_HOST, 0}, CU_MEM_ALLOCATION_TYPE_PINNED, true));
    const auto node = device_attribute(api, device, CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID);
    if (node && *node >= 0) {
        out.push_back(
            try_location(api, device, {CU_MEM_LOCATION_TYPE_HOST_NUMA, *node}, CU_MEM_ALLOCATION_TYPE_PINNED, true));
    }
    for (const CUmemLocation loc :
         {CUmemLocation{CU_MEM_LOCATION_TYPE_NONE, 0}, CUmemLocation{CU_MEM_LOCATION_TYPE_DEVICE, device},
          CUmemLocation{CU_MEM_LOCATION_TYPE_HOST, 0}}) {
        out.push_back(try_location(api, device, loc, CU_MEM_ALLOCATION_TYPE_MANAGED, false));
    }
    return out;
}

}  // namespace cumemctl::gpu
