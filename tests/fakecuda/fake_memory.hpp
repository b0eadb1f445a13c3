// The fake driver's memory: every allocation is host memory (a memfd, so that it can be exported to
// another process), device pointers are host addresses, and each device's `used` counts what this
// process holds. Feature files (pools, logical endpoints, kernels) use these to find and check memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

#include "fake_state.hpp"

namespace fake {

// One physical allocation made by cuMemCreate (or imported from another process).
struct Allocation {
    CUmemGenericAllocationHandle handle = 0;
    CUmemAllocationProp prop{};  // as requested, with what was granted (compression) filled in
    std::size_t size = 0;
    int memfd = -1;   // backs the memory; exported as a POSIX fd
    int device = -1;  // whose `used` it counts against; -1 for host memory or an import
    bool imported = false;
    bool released = false;  // cuMemRelease was called; freed when the last mapping goes
    int mappings = 0;
};

// A reserved virtual range and what is mapped in it.
struct Reservation {
    std::uintptr_t base = 0;
    std::size_t size = 0;
};

// The allocation for a handle, or nullptr. Caller holds state().mutex.
Allocation* find_allocation(CUmemGenericAllocationHandle handle);

// The allocation mapped at ptr and ptr's offset into it, or nullptr where nothing is mapped there.
// Caller holds state().mutex.
Allocation* allocation_at(CUdeviceptr ptr, std::size_t* offset);

// The reserved range that holds ptr, or nullptr. Caller holds state().mutex.
const Reservation* reservation_at(CUdeviceptr ptr);

// A set of devices that may read and write some memory: bit N for device N.
using AccessMask = std::uint32_t;
// Every device (host memory handed out by pools, cuMemAlloc without a context).
constexpr AccessMask kAllDevices = ~AccessMask{0};
// The mask of one device, or none for a negative ordinal.
inline AccessMask device_bit(int device) {
    return device < 0 || device >= 32 ? 0 : AccessMask{1} << device;
}

// Whether [ptr, ptr + size) lies in memory that `device` may touch as device memory: a mapped range
// it was granted read-write access to (cuMemSetAccess), or a cuMemAlloc/pool block it may access.
// device -1: any device (copies, which the driver routes itself). Caller holds state().mutex.
bool valid_device_range(CUdeviceptr ptr, std::size_t size, int device = -1);

// Whether device `from` can access memory of device `owner` as a peer (cuDeviceCanAccessPeer): the
// profile's per-device "peers" list; never for a device and itself, or for an ordinal that does not exist.
bool can_access_peer(int from, int owner);

// Takes `bytes` from a device's free memory; false (nothing taken) when it has too little.
// Caller holds state().mutex.
bool take_device_memory(int device, std::uint64_t bytes);
// Gives bytes back to a device. Caller holds state().mutex.
void give_device_memory(int device, std::uint64_t bytes);

// Registers a linear block (cuMemAlloc, pool allocations) as memory of device `owner` (-1: host memory)
// that the devices in `access` may touch. Caller holds state().mutex.
void add_linear_block(CUdeviceptr ptr, std::size_t size, AccessMask access, int owner);
// Removes a linear block; returns its size, or 0 if ptr starts no block. Caller holds state().mutex.
std::size_t remove_linear_block(CUdeviceptr ptr);

// Whether [p, p + size) lies in one linear block that `device` may access (-1: any device). Caller
// holds state().mutex.
bool valid_linear_range(std::uintptr_t p, std::size_t size, int device);

// Where a range [p, p + size) lies against the blocks of one registry: in none of them, wholly inside
// one, or starting inside one and running past its end.
enum class Span { none, inside, overruns };

// The range against the linear blocks, whatever their access; `owner` is set to the block's device (-1:
// host memory) where it starts in one. Caller holds state().mutex.
Span linear_span(std::uintptr_t p, std::size_t size, int& owner);

// The range against the page-locked host allocations of cuMemHostAlloc (fake_host.cpp). Caller holds
// state().mutex.
Span pinned_host_span(std::uintptr_t p, std::size_t size);
// The host NUMA node of the cuMemHostAlloc allocation that holds p (fake_host.cpp), -1 where the profile
// has no "host" object or p is in none. Caller holds state().mutex.
int pinned_host_node(std::uintptr_t p);

// Pools (fake_pools.cpp): releases, in every pool of this process, free reserved memory above the
// pool's release threshold, as the driver does at stream, event and context synchronisation.
// Caller holds state().mutex.
void release_pools_at_sync();

// Pools: frees a pool allocation or an imported pool pointer handed to cuMemFree; false when ptr is
// neither. Caller holds state().mutex.
bool free_pool_pointer(CUdeviceptr ptr);

// The granularity row for a property set, or nullptr. Several flags take the largest granule of their
// rows and fail if any row fails (the measured profiles hold one flag per row).
CUresult granularity_for(const CUmemAllocationProp& prop, std::uint64_t& min, std::uint64_t& rec);

}  // namespace fake
