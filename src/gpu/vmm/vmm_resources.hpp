// Guards for the driver resources of the virtual memory management path: a physical allocation, a
// reserved address range, and a mapping, each an OwnedHandle (cuda/owned_handle.hpp). Each frees
// what it holds when destroyed (errors ignored: the way out of a failure), and has an explicit call
// for the normal path that reports failures and, when the driver refuses, leaves the guard to try
// once more when it goes.
#pragma once

#include <cstddef>
#include <vector>

#include "cuda/driver_api.hpp"
#include "cuda/owned_handle.hpp"

namespace cumemctl::gpu {

// A CUmemGenericAllocationHandle from cuMemCreate or cuMemImportFromShareableHandle.
class AllocationHandle {
public:
    AllocationHandle() = default;
    // Takes ownership of a handle the driver returned.
    AllocationHandle(const DriverApi& api, CUmemGenericAllocationHandle handle);

    CUmemGenericAllocationHandle get() const { return handle_.get(); }
    bool valid() const { return static_cast<bool>(handle_); }
    // cuMemRelease now; throws Error when it fails (the guard then still holds the handle).
    void release();

private:
    const DriverApi* api_ = nullptr;
    OwnedHandle<CUmemGenericAllocationHandle> handle_;
};

// A virtual address range from cuMemAddressReserve.
class AddressRange {
public:
    // Reserves `size` bytes aligned to `alignment`; throws Error when the driver refuses.
    AddressRange(const DriverApi& api, std::size_t size, std::size_t alignment);

    CUdeviceptr base() const { return base_; }
    std::size_t size() const { return size_; }
    // cuMemAddressFree now; throws Error when it fails.
    void free();

private:
    const DriverApi* api_;
    CUdeviceptr base_ = 0;  // kept after the free, for messages
    std::size_t size_ = 0;
    OwnedHandle<CUdeviceptr> range_;
};

// An allocation mapped at an address (cuMemMap of the whole allocation at offset 0).
class Mapping {
public:
    // Maps `size` bytes of `handle` at `ptr`; throws Error when the driver refuses.
    Mapping(const DriverApi& api, CUdeviceptr ptr, std::size_t size, CUmemGenericAllocationHandle handle);

    // cuMemUnmap now; throws Error when it fails.
    void unmap();

private:
    const DriverApi* api_;
    OwnedHandle<CUdeviceptr> mapped_;
};

// Grants read-write access to [ptr, ptr + size) to each of `devices` (one cuMemSetAccess call with a
// descriptor per device); throws Error.
void grant_device_access(const DriverApi& api, CUdeviceptr ptr, std::size_t size, const std::vector<int>& devices);

}  // namespace cumemctl::gpu
