// The memtest kernels (device code): grid-stride loops with 16-byte accesses and verify's launch shape
// (kThreads, kBlocksPerSm, kUnroll words in flight per thread), so that each pass runs at memory speed.
// Included by gpu/verify/verify_kernels.cu, so that nvcc builds them into the one embedded fatbin and
// the driver loads them with the verify kernels, one module per context.
#pragma once

#include "gpu/verify/memtest_pattern.hpp"

namespace cumemctl_memtest_device {

using cumemctl::gpu::memtest::KernelArgs;
using cumemctl::gpu::memtest::memtest_word;
using cumemctl::gpu::memtest::MismatchLog;
using cumemctl::gpu::memtest::MismatchRecord;
using cumemctl::gpu::verify::kThreads;
using cumemctl::gpu::verify::kUnroll;
using cumemctl::gpu::verify::Word;

// The word as a 16-byte vector: x, y = lo; z, w = hi.
__device__ __forceinline__ uint4 as_vector(const Word& w) {
    return make_uint4(static_cast<unsigned>(w.lo), static_cast<unsigned>(w.lo >> 32), static_cast<unsigned>(w.hi),
                      static_cast<unsigned>(w.hi >> 32));
}

__device__ __forceinline__ unsigned long long lo_of(const uint4& v) {
    return v.x | (static_cast<unsigned long long>(v.y) << 32);
}
__device__ __forceinline__ unsigned long long hi_of(const uint4& v) {
    return v.z | (static_cast<unsigned long long>(v.w) << 32);
}

// Counts a mismatch of this thread's word (if `differs`) with one atomic per warp, and records it when
// its slot is within the log's capacity. Every active thread of the warp must call it.
__device__ __forceinline__ void note_mismatch(bool differs, unsigned long long address, const uint4& expected,
                                              const uint4& actual, MismatchLog* log) {
    const unsigned mask = __activemask();
    const unsigned found = __ballot_sync(mask, differs);
    if (found == 0) return;  // the usual case: nothing found
    const unsigned lane = threadIdx.x % 32;
    const unsigned leader = __ffs(found) - 1;
    unsigned long long first = 0;
    if (lane == leader) first = atomicAdd(&log->count, static_cast<unsigned long long>(__popc(found)));
    first = __shfl_sync(mask, first, leader);
    if (!differs) return;
    const unsigned long long slot = first + __popc(found & ((1u << lane) - 1));
    if (slot < log->capacity) {
        log->records[slot] = MismatchRecord{address, lo_of(expected), hi_of(expected), lo_of(actual), hi_of(actual)};
    }
}

// One grid-stride pass: Fill writes (kind, param); Check compares with it; with Write as well, each
// word is compared and then written with (next_kind, next_param).
template <bool Check, bool Write>
__device__ __forceinline__ void pass(const KernelArgs& a) {
    auto* words = reinterpret_cast<uint4*>(a.base);
    auto* log = reinterpret_cast<MismatchLog*>(a.log);
    const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * kThreads * kUnroll;
    const unsigned long long start = static_cast<unsigned long long>(blockIdx.x) * kThreads * kUnroll + threadIdx.x;
    for (unsigned long long base = start; base < a.words; base += stride) {
        uint4 v[kUnroll];
        if (Check) {
#pragma unroll
            for (unsigned j = 0; j < kUnroll; ++j) {
                const unsigned long long i = base + j * kThreads;
                if (i < a.words) v[j] = __ldcg(words + i);
            }
        }
#pragma unroll
        for (unsigned j = 0; j < kUnroll; ++j) {
            const unsigned long long i = base + j * kThreads;
            if (i >= a.words) continue;
            const unsigned long long address = a.base + 16 * i;
            if (Check) {
                const uint4 p = as_vector(memtest_word(a.kind, a.param, a.first_index + i, address));
                const bool differs = v[j].x != p.x || v[j].y != p.y || v[j].z != p.z || v[j].w != p.w;
                note_mismatch(differs, address, p, v[j], log);
            }
            if (Write || !Check) {
                const unsigned long long kind = Check ? a.next_kind : a.kind;
                const unsigned long long param = Check ? a.next_param : a.param;
                words[i] = as_vector(memtest_word(kind, param, a.first_index + i, address));
            }
        }
    }
}

}  // namespace cumemctl_memtest_device

extern "C" __global__ void __launch_bounds__(cumemctl::gpu::verify::kThreads, cumemctl::gpu::verify::kBlocksPerSm)
    cumemctl_memtest_fill(const cumemctl::gpu::memtest::KernelArgs a) {
    cumemctl_memtest_device::pass<false, true>(a);
}

extern "C" __global__ void __launch_bounds__(cumemctl::gpu::verify::kThreads, cumemctl::gpu::verify::kBlocksPerSm)
    cumemctl_memtest_check(const cumemctl::gpu::memtest::KernelArgs a) {
    cumemctl_memtest_device::pass<true, false>(a);
}

extern "C" __global__ void __launch_bounds__(cumemctl::gpu::verify::kThreads, cumemctl::gpu::verify::kBlocksPerSm)
    cumemctl_memtest_check_write(const cumemctl::gpu::memtest::KernelArgs a) {
    cumemctl_memtest_device::pass<true, true>(a);
}
