#include "gpu/pool/pool_access.hpp"

#include <utility>

#include <fmt/format.h>

#include "cuda/driver_call.hpp"
#include "cuda/owned_handle.hpp"
#include "gpu/device/devices.hpp"
#include "base/enum_words.hpp"
#include "base/error.hpp"

namespace cumemctl::gpu {
namespace {

bool is_device_pinned(const CUmemLocation& location, CUmemAllocationType type) {
    return location.type == CU_MEM_LOCATION_TYPE_DEVICE && type == CU_MEM_ALLOCATION_TYPE_PINNED;
}

// A pool other than a device's pinned one, on a driver without the location-wide entry point.
[[noreturn]] void needs_newer(EntryPoint entry, const CUmemLocation& location, CUmemAllocationType type) {
    const std::string version = cuda_version_string(entry.version);
    throw Error(ExitCode::unavailable,
                fmt::format("this driver has no {} (CUDA {}), which {} pools at location {} need", entry.name, version,
                            alloc_type_name(type), pool_location_name(location)),
                fmt::format("upgrade the NVIDIA driver to CUDA {} or later; device pools work through the device "
                            "entry points",
                            version));
}

// Throws "unavailable" when a support attribute is not 1, naming it and its value.
void require_attribute(const DriverApi& api, int device, int attribute, const char* name, const char* what,
                       const char* remedy) {
    const auto value = device_attribute(api, device, attribute);
    if (value && *value != 0) return;
    throw Error(ExitCode::unavailable,
                fmt::format("device {} has no {} ({} is {})", device, what, name,
                            value ? std::to_string(*value) : "unknown to this driver"),
                remedy);
}

constexpr auto kPoolChoiceWords = enum_words<PoolChoice>(
    {{PoolChoice::default_pool, "default"}, {PoolChoice::current_pool, "current"}, {PoolChoice::new_pool, "new"}},
    "default");

}  // namespace

PoolChoice parse_pool_choice(std::string_view text) {
    if (const std::optional<PoolChoice> choice = kPoolChoiceWords.parse(text)) return *choice;
    throw Error(ExitCode::usage, fmt::format("invalid pool '{}'", text), "give default, current or new");
}

std::string_view pool_choice_name(PoolChoice choice) {
    return kPoolChoiceWords.word(choice);
}

std::string pool_location_name(const CUmemLocation& location) {
    if (location.type == CU_MEM_LOCATION_TYPE_NONE) return "none";
    return location_name(location);
}

std::string_view alloc_type_name(CUmemAllocationType type) {
    return type == CU_MEM_ALLOCATION_TYPE_MANAGED ? "managed" : "pinned";
}

PoolInfo default_pool(const DriverApi& api, int device, const CUmemLocation& location, CUmemAllocationType type) {
    PoolInfo info{nullptr, device, location, type, {}, {}, {}};
    if (api.cuMemGetDefaultMemPool != nullptr) {
        CUmemLocation where = location;
        CU_CALL(api, cuMemGetDefaultMemPool, &info.handle, &where, type);
        info.queried_with = "cuMemGetDefaultMemPool";
    } else if (is_device_pinned(location, type)) {
        CU_CALL(api, cuDeviceGetDefaultMemPool, &info.handle, location.id);
        info.queried_with = "cuDeviceGetDefaultMemPool";
    } else {
        needs_newer("cuMemGetDefaultMemPool", location, type);
    }
    return info;
}

PoolInfo current_pool(const DriverApi& api, int device, const CUmemLocation& location, CUmemAllocationType type) {
    PoolInfo info{nullptr, device, location, type, {}, {}, {}};
    if (api.cuMemGetMemPool != nullptr) {
        CUmemLocation where = location;
        CU_CALL(api, cuMemGetMemPool, &info.handle, &where, type);
        info.queried_with = "cuMemGetMemPool";
    } else if (is_device_pinned(location, type)) {
        CU_CALL(api, cuDeviceGetMemPool, &info.handle, location.id);
        info.queried_with = "cuDeviceGetMemPool";
    } else {
        needs_newer("cuMemGetMemPool", location, type);
    }
    return info;
}

std::uint64_t pool_granule(const DriverApi& api, const CUmemLocation& location) {
    if (api.cuMemGetAllocationGranularity == nullptr) return 1;
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location = location;
    size_t granule = 0;
    const CUresult r = api.cuMemGetAllocationGranularity(&granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    return r == CUDA_SUCCESS && granule > 0 ? granule : 1;
}

void make_current(const DriverApi& api, const PoolInfo& pool) {
    if (api.cuMemSetMemPool != nullptr) {
        CUmemLocation where = pool.location;
        CU_CALL(api, cuMemSetMemPool, &where, pool.alloc_type, pool.handle);
    } else if (is_device_pinned(pool.location, pool.alloc_type)) {
        CU_CALL(api, cuDeviceSetMemPool, pool.location.id, pool.handle);
    } else {
        needs_newer("cuMemSetMemPool", pool.location, pool.alloc_type);
    }
}

void check_pool_support(const DriverApi& api, int device, const CUmemLocation& location,
                        CUmemAllocationHandleType handle_type) {
    require_attribute(api, device, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED,
                      "CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED", "stream-ordered memory pools",
                      "use a device and driver with cuMemAllocAsync support (CUDA 11.2+)");
    if (location.type == CU_MEM_LOCATION_TYPE_HOST) {
        require_attribute(api, device, CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED,
                          "CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED", "host memory pools",
                          "ask for device memory (location device), or use a driver with host pools (CUDA 12.6+)");
    } else if (location.type == CU_MEM_LOCATION_TYPE_HOST_NUMA) {
        require_attribute(api, device, CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED,
                          "CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED", "host-NUMA memory pools",
                          "ask for location device or host, or use a driver with host-NUMA pools");
    }
    if (handle_type == CU_MEM_HANDLE_TYPE_NONE) return;
    const int mask = device_attribute(api, device, CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES).value_or(0);
    if ((mask & handle_type) != 0) return;
    throw Error(
        ExitCode::unavailable,
        fmt::format(
            "device {}'s pools do not support {} handles (CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES: {})",
            device, handle_type_name(handle_type), handle_type_name(static_cast<unsigned>(mask))),
        mask == 0 ? "ask for handle type none: this device's pools cannot be shared between processes"
                  : fmt::format("ask for handle type {}", handle_type_names(mask).front()));
}

OwnedPool::OwnedPool(const DriverApi& api, int device, const PoolRequest& request)
    : api_(api), pool_([&api](CUmemoryPool p) { return api.cuMemPoolDestroy(p); }) {
    CU_REQUIRE(api, cuMemPoolDestroy);
    const CUmemLocation location = resolve_location(api, request.location, device);
    check_pool_support(api, device, location, request.handle_type);
    CUmemPoolProps props{};
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.handleTypes = request.handle_type;
    props.location = location;
    props.maxSize = request.max_size;
    // Held only once the driver said yes (a failed call may leave something in its output).
    CUmemoryPool created = nullptr;
    try {
        CU_CALL(api, cuMemPoolCreate, &created, &props);
    } catch (const Error& e) {
        // A host NUMA node that the driver does not know is refused as an invalid value.
        if (location.type == CU_MEM_LOCATION_TYPE_HOST_NUMA && e.problem().driver &&
            e.problem().driver->code == CUDA_ERROR_INVALID_VALUE) {
            const auto own = device_attribute(api, device, CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID);
            Problem p = e.problem();
            p.exit_code = ExitCode::unavailable;
            p.message = fmt::format("the driver has no pool location {} for device {}: {}",
                                    pool_location_name(location), device, p.message);
            p.remedy = own && *own >= 0 ? fmt::format(
                                              "device {}'s host NUMA node is {}: ask for location "
                                              "host-numa or host-numa:{}",
                                              device, *own, *own)
                                        : "ask for location host";
            throw Error(std::move(p));
        }
        throw;
    }
    pool_.reset(created);
    info_.handle = pool_.get();
    info_.device = device;
    info_.location = location;
    info_.alloc_type = CU_MEM_ALLOCATION_TYPE_PINNED;
    info_.queried_with = "cuMemPoolCreate";
    info_.handle_types = request.handle_type;
    info_.max_size = request.max_size;
}

void OwnedPool::destroy() {
    check(api_, pool_.destroy(), "cuMemPoolDestroy");
    info_.handle = nullptr;
}

}  // namespace cumemctl::gpu
