// Finding and making stream-ordered memory pools: a location's default and current pool (the CUDA
// 13 location-and-type entry points where the driver has them, else the device ones), setting the
// current pool, and pools this process creates (checked against the device first, destroyed with
// their owner). Pool attributes and pool creation need no context.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "cuda/driver_api.hpp"
#include "cuda/owned_handle.hpp"
#include "gpu/device/memory_props.hpp"

namespace cumemctl::gpu {

// Which pool a command works on.
enum class PoolChoice { default_pool, current_pool, new_pool };

// Parses "default", "current" or "new"; throws a usage error otherwise.
PoolChoice parse_pool_choice(std::string_view text);
// "default", "current", "new".
std::string_view pool_choice_name(PoolChoice choice);

// A pool and what is known of it: where its memory lives, its allocation type, the entry point that
// returned it, and the properties that are known only for pools this process created.
struct PoolInfo {
    CUmemoryPool handle = nullptr;
    int device = 0;  // the device it was looked up or created for
    CUmemLocation location{};
    CUmemAllocationType alloc_type = CU_MEM_ALLOCATION_TYPE_PINNED;
    std::string queried_with;               // e.g. "cuMemGetDefaultMemPool"
    std::optional<unsigned> handle_types;   // CUmemAllocationHandleType mask
    std::optional<std::uint64_t> max_size;  // 0: the driver's default
};

// "device", "host", "host-numa:N", or "none" (a managed pool without a preferred location).
std::string pool_location_name(const CUmemLocation& location);
// "pinned" or "managed".
std::string_view alloc_type_name(CUmemAllocationType type);

// The location's default pool for an allocation type. Throws "unavailable" where the driver lacks
// cuMemGetDefaultMemPool and the location is not a device's pinned memory.
PoolInfo default_pool(const DriverApi& api, int device, const CUmemLocation& location, CUmemAllocationType type);

// The location's current pool (what cuMemAllocAsync draws from, for a device).
PoolInfo current_pool(const DriverApi& api, int device, const CUmemLocation& location, CUmemAllocationType type);

// The granule a pool at `location` reserves memory in: the location's minimum allocation granularity
// (cuMemGetAllocationGranularity), or 1 where the driver does not say.
std::uint64_t pool_granule(const DriverApi& api, const CUmemLocation& location);

// Makes `pool` its location's current pool (cuMemSetMemPool, or cuDeviceSetMemPool for a device).
void make_current(const DriverApi& api, const PoolInfo& pool);

// Throws "unavailable" unless `device` supports pools at `location` with `handle_type`: memory pools,
// host pools (CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED) or host-NUMA pools
// (..._HOST_NUMA_MEMORY_POOLS_SUPPORTED), and a handle type within ..._MEMPOOL_SUPPORTED_HANDLE_TYPES.
void check_pool_support(const DriverApi& api, int device, const CUmemLocation& location,
                        CUmemAllocationHandleType handle_type);

// What a new pool asks for: the create --pool options.
struct PoolRequest {
    LocationSpec location;
    CUmemAllocationHandleType handle_type = CU_MEM_HANDLE_TYPE_NONE;
    std::uint64_t max_size = 0;  // 0: the driver's default
};

// A pool made with cuMemPoolCreate and destroyed (cuMemPoolDestroy) with this object, through an
// OwnedHandle (a pool the driver will not destroy is counted as lost). Creation checks the device first
// (check_pool_support), so a location or handle type the device lacks is "unavailable" (exit 3) with the
// attribute named.
class OwnedPool {
public:
    OwnedPool(const DriverApi& api, int device, const PoolRequest& request);

    const PoolInfo& info() const { return info_; }
    CUmemoryPool handle() const { return pool_.get(); }
    // Destroys the pool now; throws Error when the driver refuses (the guard tries once more when it goes).
    void destroy();

private:
    const DriverApi& api_;
    PoolInfo info_;
    OwnedHandle<CUmemoryPool> pool_;
};

}  // namespace cumemctl::gpu
