// Stream-ordered workloads on a pool: allocate every block of a pattern (cuMemAllocFromPoolAsync),
// free them (cuMemFreeAsync), synchronise, and read the pool after each step with the time each took.
// Needs a current context (PrimaryContext).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "cuda/driver_api.hpp"
#include "cuda/owned_handle.hpp"
#include "gpu/pool/pool_attributes.hpp"
#include "gpu/pool/pool_pattern.hpp"

namespace cumemctl::gpu {

// A non-blocking stream of the current context: an OwnedHandle whose destroy synchronises first.
class Stream {
public:
    explicit Stream(const DriverApi& api);

    CUstream get() const { return stream_.get(); }
    // cuStreamSynchronize: where a pool releases memory above its release threshold.
    void synchronize() const;

private:
    const DriverApi& api_;
    OwnedHandle<CUstream> stream_;
};

// One block allocated from a pool on a stream (cuMemAllocFromPoolAsync, then synchronised), freed
// with cuMemFreeAsync and a synchronisation by free() or, through its OwnedHandle, when the object goes.
class PoolAllocation {
public:
    PoolAllocation(const DriverApi& api, CUmemoryPool pool, std::uint64_t size, const Stream& stream);

    CUdeviceptr get() const { return block_.get(); }
    // Frees the block now; throws Error when the driver refuses.
    void free();

private:
    const DriverApi& api_;
    const Stream& stream_;
    OwnedHandle<CUdeviceptr> block_;  // cuMemFreeAsync, then cuStreamSynchronize
};

// One moment of a workload: the pool's attributes and the device's free memory where it was read.
struct PoolSnapshot {
    PoolAttributes pool;
    std::optional<std::uint64_t> device_free;
};

// What a workload did and what the pool said before, after allocating, after freeing and after
// synchronising.
struct WorkloadResult {
    std::uint64_t allocations = 0;
    std::uint64_t bytes = 0;
    PoolSnapshot before, after_alloc, after_free, after_sync;
    double alloc_seconds = 0;  // every cuMemAllocFromPoolAsync, then a stream synchronisation
    double free_seconds = 0;   // every cuMemFreeAsync (enqueued)
    double sync_seconds = 0;   // the synchronisation after the frees
};

// Runs `pattern` on `pool` on a new stream of the current context; `read_device_free` adds
// cuMemGetInfo to each snapshot (device pools). Whatever was allocated is freed on every path.
WorkloadResult run_workload(const DriverApi& api, CUmemoryPool pool, const WorkloadPattern& pattern,
                            bool read_device_free);

// Refuses (NoRoomError, before anything is allocated) `footprint` bytes that do not fit in the
// device's free memory (for a device location; read through the current context) or in a pool's
// maximum size (when not 0). `what` names the request: "workload '64x16MiB'", "a block of 2 MiB".
void require_room(const DriverApi& api, std::string_view what, std::uint64_t footprint, const CUmemLocation& location,
                  std::uint64_t max_size);

// What the release threshold implies for the synchronisation after the frees: a pool that holds no
// more than its threshold keeps it all; otherwise it releases unused memory down to the threshold.
struct ThresholdOutcome {
    bool keeps_all = false;              // the threshold is at or above what was reserved after the frees
    std::uint64_t expected_at_most = 0;  // what the pool may still hold after synchronising
    bool holds = false;                  // whether it did
};

// Reads the outcome off a workload's after-free and after-sync snapshots.
ThresholdOutcome threshold_outcome(const WorkloadResult& w);

// What one plain cuMemAllocAsync drew from: the used memory of the pool made current and of the
// location's default pool, before and while the allocation is held.
struct CurrentPoolDraw {
    std::uint64_t size = 0;
    std::uint64_t new_used_before = 0, new_used_during = 0;
    std::uint64_t default_used_before = 0, default_used_during = 0;
    // The allocation came from the new pool and not from the default one.
    bool drew_from_new() const {
        return new_used_during >= new_used_before + size && default_used_during == default_used_before;
    }
};

// Allocates `size` bytes with cuMemAllocAsync (which draws from the device's current pool), reads
// both pools while it is held, and frees it again.
CurrentPoolDraw draw_from_current(const DriverApi& api, CUmemoryPool new_pool, CUmemoryPool default_pool,
                                  std::uint64_t size);

}  // namespace cumemctl::gpu
