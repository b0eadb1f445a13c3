// A memory pool's attributes (CU_MEMPOOL_ATTR_*): what it has reserved and handed out, now and at its
// high-water marks, its release threshold and its three reuse policies. The driver answers these for
// pools of the calling process only: statistics are per process.
#pragma once

#include <cstdint>

#include "cuda/driver_api.hpp"

namespace cumemctl::gpu {

// Every attribute of one pool at one moment.
struct PoolAttributes {
    std::uint64_t reserved_current = 0;              // CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT
    std::uint64_t reserved_high = 0;                 // CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH
    std::uint64_t used_current = 0;                  // CU_MEMPOOL_ATTR_USED_MEM_CURRENT
    std::uint64_t used_high = 0;                     // CU_MEMPOOL_ATTR_USED_MEM_HIGH
    std::uint64_t release_threshold = 0;             // CU_MEMPOOL_ATTR_RELEASE_THRESHOLD
    bool reuse_follow_event_dependencies = false;    // CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES
    bool reuse_allow_opportunistic = false;          // CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC
    bool reuse_allow_internal_dependencies = false;  // CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES
};

// The release threshold that keeps everything a pool has reserved (UINT64_MAX).
inline constexpr std::uint64_t kKeepEverything = UINT64_MAX;

// Reads every attribute of `pool` (cuMemPoolGetAttribute); throws Error on the first that fails.
PoolAttributes read_pool_attributes(const DriverApi& api, CUmemoryPool pool);

// Sets CU_MEMPOOL_ATTR_RELEASE_THRESHOLD.
void set_release_threshold(const DriverApi& api, CUmemoryPool pool, std::uint64_t bytes);

// Resets both high-water marks (the driver accepts only zero for them).
void reset_high_water_marks(const DriverApi& api, CUmemoryPool pool);

}  // namespace cumemctl::gpu
