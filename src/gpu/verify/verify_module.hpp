// The verify kernels as the driver sees them: the fatbin that nvcc built and the core library embeds,
// loaded with cuModuleLoadData once per context and cached, so that repeated and parallel verifies
// (one thread per device) share one module per context.
#pragma once

#include <span>

#include "cuda/driver_api.hpp"

namespace cumemctl::gpu {

// The verify kernels of one context (and the memtest kernels of the same module,
// gpu/verify/memtest_pattern.hpp), and the grid that fills its device in one wave.
struct VerifyKernels {
    CUmodule module = nullptr;
    CUfunction fill = nullptr;
    CUfunction check = nullptr;
    CUfunction memtest_fill = nullptr;
    CUfunction memtest_check = nullptr;
    CUfunction memtest_check_write = nullptr;
    unsigned grid = 0;  // multiprocessors x verify::kBlocksPerSm
};

// The embedded fatbin (machine code for sm_90, sm_100 and sm_103 where nvcc can, plus PTX for the newest:
// src/CMakeLists.txt).
std::span<const unsigned char> verify_fatbin();

// The kernels of the calling thread's current context: loaded on first use, then cached by the
// context's unique id (cuCtxGetId), so a context made again after its release loads them again.
// Thread-safe. Throws Error when no context is current or the module cannot be loaded.
VerifyKernels verify_kernels(const DriverApi& api);

// Unloads the current context's kernels if they are loaded, for a caller that compares free memory
// before and after while keeping its context. Does nothing without a current context.
void unload_verify_kernels(const DriverApi& api);

// Launches one of these kernels over its arguments' `words` (16-byte words) on `stream`, with the
// smaller of the one-wave grid (`max_grid`) and the grid the words need: the one launch of verify and
// memtest. Throws Error when the driver refuses it.
void launch_over_words(const DriverApi& api, CUfunction fn, unsigned max_grid, CUstream stream,
                       unsigned long long words, void* args);

// Seconds between two recorded and completed events.
double elapsed_seconds(const DriverApi& api, CUevent from, CUevent to);

}  // namespace cumemctl::gpu
