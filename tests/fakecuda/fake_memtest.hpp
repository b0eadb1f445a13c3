// The fake driver's memtest kernels (src/gpu/verify/memtest_pattern.hpp) run on the host, with a model
// of faulty memory, and a mark that the fake NVML can see, so that counters change during a run.
#pragma once

#include "gpu/verify/memtest_pattern.hpp"

namespace fake {

// The three memtest kernels.
enum class MemtestOp { fill, check, check_write };

// Runs one memtest kernel over the launch's words as the CUDA kernel would, through the fault model
// (fake_memtest.cpp says which variables set it). Caller holds state().mutex and has checked the range.
void run_memtest(MemtestOp op, const cumemctl::gpu::memtest::KernelArgs& args);

// Counts a kernel launch (any kernel); FAKECUDA_MARK_AFTER_LAUNCHES=N:PATH creates the file PATH at
// the Nth, which the fake NVML's "after_mark" values wait for (FAKENVML_AFTER_MARK=PATH).
void count_launch();

}  // namespace fake
