// What the benchmark's own C++ programs (bench_floor, bench_doctor_floor, bench_contexts, ...) share:
// loading the driver library themselves, resolving an entry point through cuGetProcAddress_v2 (the ones
// more than one program calls as tables), failing loudly, and CUMEMCTL_TIMING's phase lines.
// Deliberately no cumemctl code: these programs are what cumemctl is measured against.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unistd.h>

namespace bench {

// Prints what failed and exits 1.
[[noreturn]] inline void fail(const char* what, int code) {
    std::fprintf(stderr, "bench: %s failed (%d)\n", what, code);
    std::exit(1);
}

// Exits with a message when a driver call fails.
inline void check(CUresult r, const char* what) {
    if (r != CUDA_SUCCESS) fail(what, static_cast<int>(r));
}

// CUMEMCTL_TIMING=1, as cumemctl's: "bench[PID]: timing PHASE +MS ms (since start: MS ms)" on stderr at
// the end of each phase (begun at the mark before, on any thread), so that scripts/gpu-doctor-timing.sh
// sets a floor's phases beside doctor's. Without the variable, a mark costs one branch.
inline void mark(const char* phase) {
    using Clock = std::chrono::steady_clock;
    static const char* env = std::getenv("CUMEMCTL_TIMING");
    static const bool on = env != nullptr && *env != '\0' && std::strcmp(env, "0") != 0;
    static std::mutex lock;
    static const Clock::time_point start = Clock::now();
    static Clock::time_point last = start;
    if (!on) return;
    const std::lock_guard<std::mutex> hold(lock);
    const Clock::time_point now = Clock::now();
    const auto ms = [](Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
    std::fprintf(stderr, "bench[%d]: timing %s +%.1f ms (since start: %.1f ms)\n", static_cast<int>(getpid()), phase,
                 ms(now - last), ms(now - start));
    last = now;
}

// dlopens libcuda.so.1 (or $CUMEMCTL_LIBCUDA: the fake driver, for the runner's --smoke mode) and
// returns its cuGetProcAddress_v2.
inline PFN_cuGetProcAddress_v12000 open_driver() {
    const char* env = std::getenv("CUMEMCTL_LIBCUDA");
    const char* library = env != nullptr && *env != '\0' ? env : "libcuda.so.1";
    void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) fail("dlopen", -1);
    auto get_proc = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(handle, "cuGetProcAddress_v2"));
    if (get_proc == nullptr) fail("dlsym cuGetProcAddress_v2", -1);
    return get_proc;
}

// Resolves one entry point with the ABI of `version`; exits when the driver lacks it.
template <typename Fn>
void resolve(PFN_cuGetProcAddress_v12000 get_proc, const char* name, int version, Fn& out) {
    void* fn = nullptr;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    if (get_proc(name, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &status) != CUDA_SUCCESS || fn == nullptr) {
        fail(name, -1);
    }
    out = reinterpret_cast<Fn>(fn);
}

// The tables of entry points that more than one benchmark program calls, each name and ABI version once:
// BENCH_MEMBER makes a table's members (PFN_name_vVERSION name), BENCH_RESOLVE resolves them into `a`.
// A program's own Api derives from the tables it calls and resolves each with its resolve_* below.
#define BENCH_MEMBER(name, version) PFN_##name##_v##version name = nullptr;
#define BENCH_RESOLVE(name, version) resolve(get_proc, #name, version, a.name);

// Every benchmark program's: cuInit, the device count, a primary context made current and released, and
// free memory.
#define BENCH_CONTEXT_API(X)            \
    X(cuInit, 2000)                     \
    X(cuDeviceGetCount, 2000)           \
    X(cuDevicePrimaryCtxRetain, 7000)   \
    X(cuDevicePrimaryCtxRelease, 11000) \
    X(cuCtxSetCurrent, 4000)            \
    X(cuMemGetInfo, 3020)

// A device's identity as `devices` and doctor's capabilities check ask it (bench_floor, bench_doctor_floor).
#define BENCH_IDENTITY_API(X)     \
    X(cuDeviceGetName, 2000)      \
    X(cuDeviceGetAttribute, 2000) \
    X(cuDeviceTotalMem, 3020)     \
    X(cuDeviceGetUuid, 11040)     \
    X(cuDeviceGetPCIBusId, 4010)

// The virtual-memory and pool-IPC entry points (bench_contexts, bench_doctor_floor).
#define BENCH_VMM_API(X)                     \
    X(cuMemGetAllocationGranularity, 10020)  \
    X(cuMemCreate, 10020)                    \
    X(cuMemRelease, 10020)                   \
    X(cuMemAddressReserve, 10020)            \
    X(cuMemAddressFree, 10020)               \
    X(cuMemMap, 10020)                       \
    X(cuMemUnmap, 10020)                     \
    X(cuMemSetAccess, 10020)                 \
    X(cuMemExportToShareableHandle, 10020)   \
    X(cuMemImportFromShareableHandle, 10020) \
    X(cuMemPoolCreate, 11020)                \
    X(cuMemPoolDestroy, 11020)               \
    X(cuMemPoolExportToShareableHandle, 11020)

struct ContextApi {
    BENCH_CONTEXT_API(BENCH_MEMBER)
};
struct IdentityApi {
    BENCH_IDENTITY_API(BENCH_MEMBER)
};
struct VmmApi {
    BENCH_VMM_API(BENCH_MEMBER)
};

inline void resolve_context(PFN_cuGetProcAddress_v12000 get_proc, ContextApi& a) {
    BENCH_CONTEXT_API(BENCH_RESOLVE)
}
inline void resolve_identity(PFN_cuGetProcAddress_v12000 get_proc, IdentityApi& a) {
    BENCH_IDENTITY_API(BENCH_RESOLVE)
}
inline void resolve_vmm(PFN_cuGetProcAddress_v12000 get_proc, VmmApi& a) {
    BENCH_VMM_API(BENCH_RESOLVE)
}

// The attributes `devices` reports, in its order: the capability catalogue of src/gpu/device/devices.cpp
// (153 to 156 are the CUDA 13.3 logical-endpoint attributes, refused by older drivers).
inline constexpr int kCapabilityAttributes[] = {
    CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES,
    CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID,
    CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED,
    CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED,
    153,
    154,
    155,
    156,
};

}  // namespace bench
