// The fake driver's page-locked host memory: cuMemHostAlloc and cuMemFreeHost. The memory is plain
// host memory (not locked: a test machine's RLIMIT_MEMLOCK is small); what makes it "pinned" is that the
// fake knows it, so that the copy model (fake_copy.hpp) moves it at the pinned rates, not the pageable.
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "fake_context.hpp"
#include "fake_memory.hpp"

namespace fake {
namespace {

// The allocations: start -> size.
std::map<std::uintptr_t, std::size_t>& pinned_blocks() {
    static auto* blocks = new std::map<std::uintptr_t, std::size_t>;
    return *blocks;
}

// The flags cuMemHostAlloc knows; the fake grants each without changing what it does.
constexpr unsigned kHostAllocFlags =
    CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED;

}  // namespace

Span pinned_host_span(std::uintptr_t p, std::size_t size) {
    auto& blocks = pinned_blocks();
    auto it = blocks.upper_bound(p);
    if (it == blocks.begin()) return Span::none;
    --it;
    if (p >= it->first + it->second) return Span::none;
    return p + size <= it->first + it->second ? Span::inside : Span::overruns;
}

std::vector<std::string> pinned_host_leaks() {
    if (pinned_blocks().empty()) return {};
    return {std::to_string(pinned_blocks().size()) + " page-locked host allocations (cuMemHostAlloc) not freed"};
}

}  // namespace fake

extern "C" {

// As the driver: a current context is needed, and a flag it does not know is CUDA_ERROR_INVALID_VALUE.
CUresult cuMemHostAlloc(void** pp, size_t bytesize, unsigned int flags) {
    FAKE_ENTRY_INIT("cuMemHostAlloc");
    if (pp == nullptr || bytesize == 0 || (flags & ~fake::kHostAllocFlags) != 0) return CUDA_ERROR_INVALID_VALUE;
    if (fake::current_context_device() < 0) return CUDA_ERROR_INVALID_CONTEXT;
    void* p = std::aligned_alloc(4096, (bytesize + 4095) / 4096 * 4096);
    if (p == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    fake::pinned_blocks()[reinterpret_cast<std::uintptr_t>(p)] = bytesize;
    *pp = p;
    return CUDA_SUCCESS;
}

CUresult cuMemFreeHost(void* p) {
    FAKE_ENTRY_INIT("cuMemFreeHost");
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    if (fake::pinned_blocks().erase(reinterpret_cast<std::uintptr_t>(p)) == 0) return CUDA_ERROR_INVALID_VALUE;
    std::free(p);
    return CUDA_SUCCESS;
}

}  // extern "C"
