#include "gpu/pool/pool_attributes.hpp"

#include "cuda/driver_call.hpp"

namespace cumemctl::gpu {
namespace {

std::uint64_t get_u64(const DriverApi& api, CUmemoryPool pool, CUmemPool_attribute attr) {
    cuuint64_t value = 0;
    CU_CALL(api, cuMemPoolGetAttribute, pool, attr, &value);
    return value;
}

bool get_flag(const DriverApi& api, CUmemoryPool pool, CUmemPool_attribute attr) {
    int value = 0;
    CU_CALL(api, cuMemPoolGetAttribute, pool, attr, &value);
    return value != 0;
}

void set_u64(const DriverApi& api, CUmemoryPool pool, CUmemPool_attribute attr, std::uint64_t bytes) {
    cuuint64_t value = bytes;
    CU_CALL(api, cuMemPoolSetAttribute, pool, attr, &value);
}

}  // namespace

PoolAttributes read_pool_attributes(const DriverApi& api, CUmemoryPool pool) {
    PoolAttributes a;
    a.reserved_current = get_u64(api, pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
    a.reserved_high = get_u64(api, pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH);
    a.used_current = get_u64(api, pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT);
    a.used_high = get_u64(api, pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH);
    a.release_threshold = get_u64(api, pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD);
    a.reuse_follow_event_dependencies = get_flag(api, pool, CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES);
    a.reuse_allow_opportunistic = get_flag(api, pool, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC);
    a.reuse_allow_internal_dependencies = get_flag(api, pool, CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES);
    return a;
}

void set_release_threshold(const DriverApi& api, CUmemoryPool pool, std::uint64_t bytes) {
    set_u64(api, pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, bytes);
}

void reset_high_water_marks(const DriverApi& api, CUmemoryPool pool) {
    set_u64(api, pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, 0);
    set_u64(api, pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, 0);
}

}  // namespace cumemctl::gpu
