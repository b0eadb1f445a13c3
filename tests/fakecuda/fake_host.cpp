// The fake driver's page-locked host memory: cuMemHostAlloc and cuMemFreeHost. The memory is plain
// host memory (not locked: a test machine's RLIMIT_MEMLOCK is small); what makes it "pinned" is that the
// fake knows it, so that the copy model (fake_copy.hpp) moves it at the pinned rates, not the pageable.
//
// Its NUMA node, where the profile describes the host's ("host": {"numa_cpus": {"0": [0], "1": [1]}}:
// each node's CPUs), is where the kernel would put it: the node of the CPUs the calling thread may run on
// (sched_getaffinity), the node of the lowest of them where they span several (an unbound thread first
// touches its pages wherever it happens to run; the model picks one place, always the same). The copy
// model moves memory of a node other than the device's at remote_numa_factor of the rate. Profiles pick
// CPUs 0 and 1, which any test machine of two CPUs has, so that a thread bound to node 1 really runs there.
#include <sched.h>

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "fake_context.hpp"
#include "fake_copy.hpp"
#include "fake_memory.hpp"

namespace fake {
namespace {

// One allocation: its size and NUMA node (-1: the profile does not say).
struct PinnedBlock {
    std::size_t size = 0;
    int node = -1;
};

// The allocations: start -> block.
std::map<std::uintptr_t, PinnedBlock>& pinned_blocks() {
    static auto* blocks = new std::map<std::uintptr_t, PinnedBlock>;
    return *blocks;
}

// The node of `cpu` in the profile's host.numa_cpus, -1 where it lists it nowhere. Caller holds
// state().mutex.
int node_of_cpu(const nlohmann::json& numa_cpus, int cpu) {
    for (const auto& [node, cpus] : numa_cpus.items()) {
        for (const auto& c : cpus) {
            if (c.get<int>() == cpu) return std::stoi(node);
        }
    }
    return -1;
}

// Where memory the calling thread allocates now lands (above); -1 without the profile's "host".
// Caller holds state().mutex.
int calling_thread_node() {
    const nlohmann::json& profile = state().profile;
    if (!profile.contains("host") || !profile["host"].contains("numa_cpus")) return -1;
    const nlohmann::json& numa_cpus = profile["host"]["numa_cpus"];
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) return -1;
    int node = -1, lowest = -1;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (!CPU_ISSET(cpu, &set)) continue;
        const int n = node_of_cpu(numa_cpus, cpu);
        if (lowest < 0) lowest = n, node = n;
        if (n != node) return lowest;
    }
    return node;
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
    if (p >= it->first + it->second.size) return Span::none;
    return p + size <= it->first + it->second.size ? Span::inside : Span::overruns;
}

int pinned_host_node(std::uintptr_t p) {
    auto& blocks = pinned_blocks();
    auto it = blocks.upper_bound(p);
    if (it == blocks.begin()) return -1;
    --it;
    return p < it->first + it->second.size ? it->second.node : -1;
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
    fake::pinned_blocks()[reinterpret_cast<std::uintptr_t>(p)] = {bytesize, fake::calling_thread_node()};
    *pp = p;
    return CUDA_SUCCESS;
}

CUresult cuMemFreeHost(void* p) {
    FAKE_ENTRY_INIT("cuMemFreeHost");
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    const auto it = fake::pinned_blocks().find(reinterpret_cast<std::uintptr_t>(p));
    if (it == fake::pinned_blocks().end()) return CUDA_ERROR_INVALID_VALUE;
    fake::forget_gates(it->first, it->first + it->second.size);
    fake::pinned_blocks().erase(it);
    std::free(p);
    return CUDA_SUCCESS;
}

// Page-locked host memory's device address is its host address (unified addressing); flags must be 0.
CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr* dptr, void* p, unsigned int flags) {
    FAKE_ENTRY_INIT("cuMemHostGetDevicePointer");
    if (dptr == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    if (fake::current_context_device() < 0) return CUDA_ERROR_INVALID_CONTEXT;
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    if (fake::pinned_host_span(reinterpret_cast<std::uintptr_t>(p), 1) != fake::Span::inside) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    *dptr = reinterpret_cast<CUdeviceptr>(p);
    return CUDA_SUCCESS;
}

}  // extern "C"
