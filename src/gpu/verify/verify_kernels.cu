// The verify kernels: a grid-stride fill of the pattern and a grid-stride check of it, 16 bytes per
// access, kUnroll independent words in flight per thread. Built by nvcc into a fatbin that the core
// library embeds (verify_fatbin.S) and loads with cuModuleLoadData; no CUDA runtime is involved.
#include "gpu/verify/verify_pattern.hpp"

using cumemctl::gpu::verify::Counters;
using cumemctl::gpu::verify::kBlocksPerSm;
using cumemctl::gpu::verify::KernelArgs;
using cumemctl::gpu::verify::kThreads;
using cumemctl::gpu::verify::kUnroll;
using cumemctl::gpu::verify::pattern_byte;
using cumemctl::gpu::verify::pattern_word;
using cumemctl::gpu::verify::Word;

namespace {

// The pattern word as a 16-byte vector: x, y = lo; z, w = hi (little-endian, as the host lays it out).
__device__ __forceinline__ uint4 pattern_vector(unsigned long long index, unsigned long long seed) {
    const Word w = pattern_word(index, seed);
    return make_uint4(static_cast<unsigned>(w.lo), static_cast<unsigned>(w.lo >> 32), static_cast<unsigned>(w.hi),
                      static_cast<unsigned>(w.hi >> 32));
}

// Whether the 0..15 tail bytes after the last whole word differ from the pattern.
__device__ bool tail_differs(const KernelArgs& a) {
    const auto* tail = reinterpret_cast<const unsigned char*>(a.base + a.words * 16);
    const Word w = pattern_word(a.words, a.seed);
    bool differs = false;
    for (unsigned i = 0; i < a.tail_bytes; ++i) differs |= tail[i] != pattern_byte(w, i);
    return differs;
}

// Sums `count` and takes the minimum of `first` over the block; thread 0 adds them to the counters.
// Every thread of the block must call it.
__device__ void publish_mismatches(unsigned long long count, unsigned long long first, Counters* counters) {
    if (!__syncthreads_or(count != 0)) return;  // the usual case: nothing found, no reduction
    __shared__ unsigned long long counts[kThreads / 32];
    __shared__ unsigned long long firsts[kThreads / 32];
    for (int delta = 16; delta > 0; delta /= 2) {
        count += __shfl_down_sync(0xffffffffu, count, delta);
        first = min(first, __shfl_down_sync(0xffffffffu, first, delta));
    }
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) {
        counts[warp] = count;
        firsts[warp] = first;
    }
    __syncthreads();
    if (threadIdx.x != 0) return;
    for (unsigned i = 1; i < kThreads / 32; ++i) {
        count += counts[i];
        first = min(first, firsts[i]);
    }
    atomicAdd(&counters->mismatches, count);
    atomicMin(&counters->first_index, first);
}

}  // namespace

// Writes the pattern over every word of the range and over the tail bytes.
extern "C" __global__ void __launch_bounds__(kThreads, kBlocksPerSm) cumemctl_verify_fill(const KernelArgs a) {
    auto* words = reinterpret_cast<uint4*>(a.base);
    const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * kThreads * kUnroll;
    const unsigned long long start = static_cast<unsigned long long>(blockIdx.x) * kThreads * kUnroll + threadIdx.x;
    for (unsigned long long base = start; base < a.words; base += stride) {
#pragma unroll
        for (unsigned j = 0; j < kUnroll; ++j) {
            const unsigned long long i = base + j * kThreads;
            if (i < a.words) words[i] = pattern_vector(i, a.seed);
        }
    }
    if (blockIdx.x == 0 && threadIdx.x == 0 && a.tail_bytes != 0) {
        auto* tail = reinterpret_cast<unsigned char*>(a.base + a.words * 16);
        const Word w = pattern_word(a.words, a.seed);
        for (unsigned i = 0; i < a.tail_bytes; ++i) tail[i] = pattern_byte(w, i);
    }
}

// Reads every word of the range (and the tail bytes) and compares it with the pattern; adds the
// mismatching words to the counters and lowers their first_index to the lowest mismatching word.
extern "C" __global__ void __launch_bounds__(kThreads, kBlocksPerSm) cumemctl_verify_check(const KernelArgs a) {
    const auto* words = reinterpret_cast<const uint4*>(a.base);
    const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * kThreads * kUnroll;
    unsigned long long count = 0, first = ~0ULL;
    const unsigned long long start = static_cast<unsigned long long>(blockIdx.x) * kThreads * kUnroll + threadIdx.x;
    for (unsigned long long base = start; base < a.words; base += stride) {
        uint4 v[kUnroll];
#pragma unroll
        for (unsigned j = 0; j < kUnroll; ++j) {
            const unsigned long long i = base + j * kThreads;
            if (i < a.words) v[j] = __ldcs(words + i);  // streamed: read once, no reuse
        }
#pragma unroll
        for (unsigned j = 0; j < kUnroll; ++j) {
            const unsigned long long i = base + j * kThreads;
            if (i >= a.words) continue;
            const uint4 p = pattern_vector(i, a.seed);
            if (v[j].x != p.x || v[j].y != p.y || v[j].z != p.z || v[j].w != p.w) {
                ++count;
                first = min(first, i);
            }
        }
    }
    if (blockIdx.x == 0 && threadIdx.x == 0 && a.tail_bytes != 0 && tail_differs(a)) {
        ++count;
        first = min(first, a.words);
    }
    publish_mismatches(count, first, reinterpret_cast<Counters*>(a.counters));
}

// The memtest kernels share this fatbin (and so the module each context loads once).
#include "gpu/verify/memtest_kernels.cuh"
