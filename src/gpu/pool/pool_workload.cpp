#include "gpu/pool/pool_workload.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "base/interrupt.hpp"
#include "base/scope_exit.hpp"
#include "base/setting.hpp"
#include "cuda/driver_call.hpp"
#include "cuda/owned_handle.hpp"
#include "gpu/device/primary_context.hpp"
#include "util/stopwatch.hpp"
#include "gpu/device/locality.hpp"

namespace cumemctl::gpu {
namespace {

// Blocks allocated on a stream, in the order they were allocated, each an OwnedHandle that frees it
// (cuMemFreeAsync, not synchronised).
using Blocks = std::vector<OwnedHandle<CUdeviceptr>>;

// A guard for a block allocated on `stream`, empty until the allocation writes through out().
OwnedHandle<CUdeviceptr> block_guard(const DriverApi& api, const Stream& stream) {
    return OwnedHandle<CUdeviceptr>([&api, &stream](CUdeviceptr p) { return api.cuMemFreeAsync(p, stream.get()); });
}

// Frees every block in order (stream-ordered, not synchronised) and forgets them; throws Error when the
// driver refuses one, which stays held with those after it.
void free_all(const DriverApi& api, Blocks& blocks) {
    for (OwnedHandle<CUdeviceptr>& b : blocks) check(api, b.destroy(), "cuMemFreeAsync");
    blocks.clear();
}

// On an error or a signal: frees in order what is still held, then synchronises the stream; a block the
// driver refuses to free is counted in lost_handle_count() by its guard.
void free_held(const DriverApi& api, const Stream& stream, Blocks& blocks) {
    const auto holds = [](const OwnedHandle<CUdeviceptr>& b) { return static_cast<bool>(b); };
    if (std::ranges::none_of(blocks, holds)) return;
    for (OwnedHandle<CUdeviceptr>& b : blocks) b.reset();
    api.cuStreamSynchronize(stream.get());
}

PoolSnapshot snapshot(const DriverApi& api, CUmemoryPool pool, bool read_device_free) {
    PoolSnapshot s;
    s.pool = read_pool_attributes(api, pool);
    if (read_device_free) s.device_free = current_device_memory(api).free;
    return s;
}

std::uint64_t used_of(const DriverApi& api, CUmemoryPool pool) {
    return read_pool_attributes(api, pool).used_current;
}

}  // namespace

Stream::Stream(const DriverApi& api)
    : api_(api), stream_([&api](CUstream s) {
          api.cuStreamSynchronize(s);
          return api.cuStreamDestroy(s);
      }) {
    CU_REQUIRE(api, cuStreamDestroy);
    CU_CALL(api, cuStreamCreate, stream_.out(), CU_STREAM_NON_BLOCKING);
}

void Stream::synchronize() const {
    CU_CALL(api_, cuStreamSynchronize, stream_.get());
}

PoolAllocation::PoolAllocation(const DriverApi& api, CUmemoryPool pool, std::uint64_t size, const Stream& stream)
    : api_(api), stream_(stream), block_([&api, &stream](CUdeviceptr p) {
          const CUresult r = api.cuMemFreeAsync(p, stream.get());
          api.cuStreamSynchronize(stream.get());
          return r;
      }) {
    CU_REQUIRE(api, cuMemFreeAsync);
    CU_CALL(api, cuMemAllocFromPoolAsync, block_.out(), size, pool, stream.get());
    stream.synchronize();  // refused, block_ frees the block as the constructor unwinds
}

void PoolAllocation::free() {
    if (!block_) return;
    // Refused, the block stays held and its guard tries once more.
    CU_CALL(api_, cuMemFreeAsync, block_.get(), stream_.get());
    block_.release();
    stream_.synchronize();
}

WorkloadResult run_workload(const DriverApi& api, CUmemoryPool pool, const WorkloadPattern& pattern,
                            bool read_device_free) {
    CU_REQUIRE(api, cuMemFreeAsync);
    WorkloadResult r;
    r.allocations = pattern.allocations();
    r.bytes = pattern.bytes();
    const Stream stream(api);
    Blocks held;
    const ScopeExit free_left([&] { free_held(api, stream, held); });
    r.before = snapshot(api, pool, read_device_free);
    Stopwatch watch;
    for (const auto& item : pattern.items) {
        for (std::uint64_t i = 0; i < item.count; ++i) {
            check_interrupted();  // SIGINT/SIGTERM: free_left frees what was allocated
            OwnedHandle<CUdeviceptr> block = block_guard(api, stream);
            CU_CALL(api, cuMemAllocFromPoolAsync, block.out(), item.size, pool, stream.get());
            held.push_back(std::move(block));
        }
    }
    stream.synchronize();
    r.alloc_seconds = watch.lap();
    r.after_alloc = snapshot(api, pool, read_device_free);
    watch.lap();
    check_interrupted();
    free_all(api, held);
    r.free_seconds = watch.lap();
    r.after_free = snapshot(api, pool, read_device_free);
    watch.lap();
    stream.synchronize();
    r.sync_seconds = watch.lap();
    r.after_sync = snapshot(api, pool, read_device_free);
    return r;
}

void require_room(const DriverApi& api, std::string_view what, std::uint64_t footprint, const CUmemLocation& location,
                  std::uint64_t max_size) {
    if (is_device_memory(location)) {
        require_fits(what, footprint, current_device_memory(api).free,
                     fmt::format("device {}'s free memory", location_device(location)));
    }
    if (max_size != 0)
        require_fits(what, footprint, max_size, fmt::format("the pool's {}", setting_name(Setting::pool_max_size)));
}

ThresholdOutcome threshold_outcome(const WorkloadResult& w) {
    ThresholdOutcome o;
    const std::uint64_t threshold = w.after_free.pool.release_threshold;
    const std::uint64_t held = w.after_free.pool.reserved_current;
    o.keeps_all = threshold >= held;
    o.expected_at_most = o.keeps_all ? held : std::max(threshold, w.after_sync.pool.used_current);
    o.holds = o.keeps_all ? w.after_sync.pool.reserved_current == held
                          : w.after_sync.pool.reserved_current <= o.expected_at_most;
    return o;
}

CurrentPoolDraw draw_from_current(const DriverApi& api, CUmemoryPool new_pool, CUmemoryPool default_pool,
                                  std::uint64_t size) {
    CurrentPoolDraw d;
    d.size = size;
    const Stream stream(api);
    Blocks held;
    const ScopeExit free_left([&] { free_held(api, stream, held); });
    d.new_used_before = used_of(api, new_pool);
    d.default_used_before = used_of(api, default_pool);
    OwnedHandle<CUdeviceptr> block = block_guard(api, stream);
    CU_CALL(api, cuMemAllocAsync, block.out(), size, stream.get());
    held.push_back(std::move(block));
    stream.synchronize();
    d.new_used_during = used_of(api, new_pool);
    d.default_used_during = used_of(api, default_pool);
    free_all(api, held);
    stream.synchronize();
    return d;
}

}  // namespace cumemctl::gpu
