// The memory a logical endpoint binds: a cuMemCreate allocation and, for a bind by address, a reserved
// virtual range with the allocation mapped read-write for the device. Everything is undone (unmap,
// free the range, release the allocation) when it goes away, also when it was only half made.
#pragma once

#include <cstdint>
#include <optional>

#include "steps/step_log.hpp"

namespace cumemctl {

// One allocation for one device's binding, optionally mapped.
class LeMemory {
public:
    // Creates `size` bytes with `prop`; with `map`, reserves a range aligned to `alignment`, maps the
    // allocation there and makes it read-write for `device`. Throws Error with what failed.
    LeMemory(StepLog& log, const CUmemAllocationProp& prop, std::uint64_t size, int device, bool map,
             std::uint64_t alignment);

    CUmemGenericAllocationHandle handle() const { return created_->handle; }
    CUdeviceptr ptr() const { return range_ ? range_->ptr : 0; }  // 0 when not mapped
    std::uint64_t size() const { return size_; }
    int device() const { return device_; }
    const CUmemAllocationProp& prop() const { return prop_; }

private:
    // cuMemCreate / cuMemRelease.
    struct Created {
        Created(StepLog& log, const CUmemAllocationProp& prop, std::uint64_t size, int device);
        ~Created();
        Created(const Created&) = delete;
        Created& operator=(const Created&) = delete;
        StepLog& log;
        CUmemGenericAllocationHandle handle = 0;
    };
    // cuMemAddressReserve / cuMemAddressFree.
    struct Range {
        Range(StepLog& log, std::uint64_t size, std::uint64_t alignment);
        ~Range();
        Range(const Range&) = delete;
        Range& operator=(const Range&) = delete;
        StepLog& log;
        CUdeviceptr ptr = 0;
        std::uint64_t size = 0;
    };
    // cuMemMap (+ cuMemSetAccess) / cuMemUnmap.
    struct Mapped {
        Mapped(StepLog& log, CUdeviceptr ptr, std::uint64_t size, CUmemGenericAllocationHandle handle, int device);
        ~Mapped();
        Mapped(const Mapped&) = delete;
        Mapped& operator=(const Mapped&) = delete;
        StepLog& log;
        CUdeviceptr ptr = 0;
        std::uint64_t size = 0;
    };

    CUmemAllocationProp prop_{};
    std::uint64_t size_ = 0;
    int device_ = 0;
    // Declared in the order they are made, so they are undone in reverse.
    std::optional<Created> created_;
    std::optional<Range> range_;
    std::optional<Mapped> mapped_;
};

}  // namespace cumemctl
