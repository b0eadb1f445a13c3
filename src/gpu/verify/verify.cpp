#include "gpu/verify/verify.hpp"

#include <algorithm>
#include <random>
#include <utility>

#include <fmt/format.h>

#include "base/interrupt.hpp"
#include "cuda/driver_call.hpp"
#include "cuda/owned_handle.hpp"
#include "gpu/verify/verify_module.hpp"
#include "gpu/verify/verify_pattern.hpp"

namespace cumemctl::gpu {
namespace {

// Refuses what the kernels cannot do: an empty range, or one not aligned for 16-byte accesses.
void validate_range(CUdeviceptr ptr, std::size_t size) {
    if (size == 0) throw Error(ExitCode::usage, "cannot verify an empty range", "give a size of at least 1 byte");
    if (ptr % 16 != 0) {
        throw Error(
            internal_error(fmt::format("cannot verify memory at {:#x}: it is not 16-byte aligned (verify "
                                       "whole allocations or mappings, which are aligned to the granularity)",
                                       ptr)));
    }
}

// 10^9 bytes per second, 0 where no time was measured.
double gbps(std::uint64_t bytes, double seconds) {
    return seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0;
}

// Says what an illegal address during a pass means for the range being verified.
void explain_illegal_address(Error& e, CUdeviceptr ptr, std::size_t size) {
    auto& p = e.problem();
    if (!p.driver || p.driver->code != CUDA_ERROR_ILLEGAL_ADDRESS) return;
    p.cause = fmt::format("the verify kernel touched memory in [{:#x}, {:#x}) that this device cannot access", ptr,
                          ptr + size);
    p.remedy = "map the whole range and grant this device read-write access (cuMemSetAccess) before verifying";
}

// Runs the fill and/or the check pass over the range, each timed with events, and reads back the
// mismatch counters. Every resource is released on every path.
VerifyResult run_passes(const DriverApi& api, CUdeviceptr ptr, std::size_t size, std::uint64_t seed, bool fill,
                        bool check) {
    validate_range(ptr, size);
    const VerifyKernels kernels = verify_kernels(api);
    // A blocking stream: it waits for the legacy default stream, so the counters that the synchronous
    // cuMemcpyHtoD below sets up are in place before the check runs.
    OwnedHandle<CUstream> stream(api.cuStreamDestroy);
    CU_CALL(api, cuStreamCreate, stream.out(), CU_STREAM_DEFAULT);
    OwnedHandle<CUevent> start(api.cuEventDestroy), filled(api.cuEventDestroy), checked(api.cuEventDestroy);
    for (CUevent* e : {start.out(), filled.out(), checked.out()}) CU_CALL(api, cuEventCreate, e, CU_EVENT_DEFAULT);
    OwnedHandle<CUdeviceptr> counters(api.cuMemFree);
    CU_CALL(api, cuMemAlloc, counters.out(), sizeof(verify::Counters));
    const verify::Counters initial{0, ~0ULL};
    CU_CALL(api, cuMemcpyHtoD, counters.get(), &initial, sizeof initial);
    verify::KernelArgs args{ptr, size / 16, size % 16, seed, counters.get()};
    VerifyResult result;
    result.bytes = size;
    try {
        CU_CALL(api, cuEventRecord, start.get(), stream.get());
        if (fill) launch_over_words(api, kernels.fill, kernels.grid, stream.get(), args.words, &args);
        CU_CALL(api, cuEventRecord, filled.get(), stream.get());
        if (check) launch_over_words(api, kernels.check, kernels.grid, stream.get(), args.words, &args);
        CU_CALL(api, cuEventRecord, checked.get(), stream.get());
        CU_CALL(api, cuEventSynchronize, checked.get());
    } catch (Error& e) {
        explain_illegal_address(e, ptr, size);
        throw;
    }
    check_interrupted();  // the kernels may have run long: a stop request ends the run here
    if (fill) result.fill_seconds = elapsed_seconds(api, start.get(), filled.get());
    if (check) {
        result.check_seconds = elapsed_seconds(api, filled.get(), checked.get());
        verify::Counters found{};
        CU_CALL(api, cuMemcpyDtoH, &found, counters.get(), sizeof found);
        result.mismatches = found.mismatches;
        if (found.mismatches > 0) result.first_mismatch_offset = found.first_index * 16;
    }
    result.fill_gbps = gbps(fill ? size : 0, result.fill_seconds);
    result.check_gbps = gbps(check ? size : 0, result.check_seconds);
    return result;
}

}  // namespace

VerifyResult fill_and_check(const DriverApi& api, CUdeviceptr ptr, std::size_t size, std::uint64_t seed) {
    return run_passes(api, ptr, size, seed, true, true);
}

VerifyResult fill_pattern(const DriverApi& api, CUdeviceptr ptr, std::size_t size, std::uint64_t seed) {
    return run_passes(api, ptr, size, seed, true, false);
}

VerifyResult check_pattern(const DriverApi& api, CUdeviceptr ptr, std::size_t size, std::uint64_t seed) {
    return run_passes(api, ptr, size, seed, false, true);
}

std::uint64_t random_pattern_seed() {
    std::random_device rd;
    return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

Error pattern_mismatch(const std::string& what, const VerifyResult& v) {
    return Error(ExitCode::failed,
                 fmt::format("{} found {} of {} 16-byte words wrong, the first at byte offset {}", what, v.mismatches,
                             (v.bytes + 15) / 16, v.first_mismatch_offset),
                 "the memory does not hold what was written: run it again, and check the GPU's health "
                 "(nvidia-smi -q -d ECC,ROW_REMAPPER)");
}

}  // namespace cumemctl::gpu
