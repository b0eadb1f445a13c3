// The memory a memtest tests: cuMemCreate chunks of one size (a multiple of the recommended
// granularity; smaller ones at the end) mapped side by side into one reserved address range, so that
// the whole of a device's free memory is tested however fragmented it is. A chunk the driver has no
// room for is halved, down to one granule; a refusal of that ends the allocation there: what was made
// is tested and the refusal is a result (another process may have taken the memory), never a crash.
// Held by the VMM guards of gpu/vmm, released in order.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "base/error.hpp"
#include "cuda/driver_api.hpp"
#include "gpu/vmm/vmm_resources.hpp"
#include "steps/step_log.hpp"

namespace cumemctl::gpu::memtest {

// One chunk: where it lies in the range and how large it is.
struct Chunk {
    std::uint64_t offset = 0;
    std::uint64_t size = 0;
};

// What to make: `target` bytes (rounded down to `granularity`) in chunks of `chunk` bytes.
struct MemoryPlan {
    int device = 0;
    std::uint64_t target = 0;
    std::uint64_t chunk = 0;        // a multiple of granularity
    std::uint64_t granularity = 0;  // the recommended granularity of device memory
};

// The tested memory of one device, mapped read-write for it.
class TestMemory {
public:
    // Reserves the range and makes and maps chunks until `plan.target` is reached or the driver
    // refuses a chunk (then `shortfall` says which call and why); each chunk is a safe point for a stop
    // request (Interrupted). The steps (reserve, chunks made, access) go to `log`. Throws Error when not
    // even the range can be reserved, or when no chunk at all can be made.
    TestMemory(const DriverApi& api, const MemoryPlan& plan, StepLog& log);
    TestMemory(const TestMemory&) = delete;
    TestMemory& operator=(const TestMemory&) = delete;
    ~TestMemory();

    CUdeviceptr base() const { return range_->base(); }
    // Bytes mapped and tested: the sum of the chunks.
    std::uint64_t bytes() const { return bytes_; }
    const std::vector<Chunk>& chunks() const { return chunks_; }
    // Why fewer bytes than planned were made, when they were.
    const std::optional<Problem>& shortfall() const { return shortfall_; }
    // The chunk holding `offset` (an index into chunks()).
    std::size_t chunk_at(std::uint64_t offset) const;

    // Unmaps, releases and frees everything now, each as an undo step of `log`; idempotent.
    void release(StepLog& log);

private:
    std::optional<AddressRange> range_;
    std::vector<AllocationHandle> handles_;
    std::vector<Mapping> mappings_;
    std::vector<Chunk> chunks_;
    std::uint64_t bytes_ = 0;
    std::optional<Problem> shortfall_;
};

}  // namespace cumemctl::gpu::memtest
