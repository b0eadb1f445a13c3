// The memory a logical endpoint binds: a cuMemCreate allocation and, for a bind by address, a reserved
// virtual range with the allocation mapped read-write for the device. Everything is undone (unmap,
// free the range, release the allocation) when it goes away, also when it was only half made.
#pragma once

#include <cstdint>
#include <optional>

#include "cuda/owned_handle.hpp"
#include "steps/step_log.hpp"

namespace cumemctl::gpu {

// One allocation for one device's binding, optionally mapped.
class LeMemory {
public:
    // Creates `size` bytes with `prop`; with `map`, reserves a range aligned to `alignment`, maps the
    // allocation there and makes it read-write for `device`. Throws Error with what failed (its remedy
    // naming settings through setting_name).
    LeMemory(StepLog& log, const CUmemAllocationProp& prop, std::uint64_t size, int device, bool map,
             std::uint64_t alignment);

    CUmemGenericAllocationHandle handle() const { return created_.get(); }
    CUdeviceptr ptr() const { return range_.get(); }  // 0 when not mapped
    std::uint64_t size() const { return size_; }
    int device() const { return device_; }
    const CUmemAllocationProp& prop() const { return prop_; }

private:
    CUmemAllocationProp prop_{};
    std::uint64_t size_ = 0;
    int device_ = 0;
    // OwnedHandles whose destroy call is an undo step of the log; declared in the order they are
    // made, so they are undone in reverse (also when the constructor fails half-way).
    OwnedHandle<CUmemGenericAllocationHandle> created_;  // cuMemCreate / cuMemRelease
    OwnedHandle<CUdeviceptr> range_;                     // cuMemAddressReserve / cuMemAddressFree
    OwnedHandle<CUdeviceptr> mapped_;                    // cuMemMap (+ cuMemSetAccess) / cuMemUnmap
};

}  // namespace cumemctl::gpu
