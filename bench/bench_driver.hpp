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

// The entry points every benchmark program calls: cuInit, the device count, a primary context made current
// and released, and free memory. A program's Api derives from it and resolves them with resolve_context.
struct ContextApi {
    PFN_cuInit_v2000 cuInit = nullptr;
    PFN_cuDeviceGetCount_v2000 cuDeviceGetCount = nullptr;
    PFN_cuDevicePrimaryCtxRetain_v7000 cuDevicePrimaryCtxRetain = nullptr;
    PFN_cuDevicePrimaryCtxRelease_v11000 cuDevicePrimaryCtxRelease = nullptr;
    PFN_cuCtxSetCurrent_v4000 cuCtxSetCurrent = nullptr;
    PFN_cuMemGetInfo_v3020 cuMemGetInfo = nullptr;
};

inline void resolve_context(PFN_cuGetProcAddress_v12000 get_proc, ContextApi& a) {
    resolve(get_proc, "cuInit", 2000, a.cuInit);
    resolve(get_proc, "cuDeviceGetCount", 2000, a.cuDeviceGetCount);
    resolve(get_proc, "cuDevicePrimaryCtxRetain", 7000, a.cuDevicePrimaryCtxRetain);
    resolve(get_proc, "cuDevicePrimaryCtxRelease", 11000, a.cuDevicePrimaryCtxRelease);
    resolve(get_proc, "cuCtxSetCurrent", 4000, a.cuCtxSetCurrent);
    resolve(get_proc, "cuMemGetInfo", 3020, a.cuMemGetInfo);
}

// A device's identity as `devices` and doctor's capabilities check ask it (bench_floor,
// bench_doctor_floor), resolved with resolve_identity.
struct IdentityApi {
    PFN_cuDeviceGetName_v2000 cuDeviceGetName = nullptr;
    PFN_cuDeviceGetAttribute_v2000 cuDeviceGetAttribute = nullptr;
    PFN_cuDeviceTotalMem_v3020 cuDeviceTotalMem = nullptr;
    PFN_cuDeviceGetUuid_v11040 cuDeviceGetUuid = nullptr;
    PFN_cuDeviceGetPCIBusId_v4010 cuDeviceGetPCIBusId = nullptr;
};

inline void resolve_identity(PFN_cuGetProcAddress_v12000 get_proc, IdentityApi& a) {
    resolve(get_proc, "cuDeviceGetName", 2000, a.cuDeviceGetName);
    resolve(get_proc, "cuDeviceGetAttribute", 2000, a.cuDeviceGetAttribute);
    resolve(get_proc, "cuDeviceTotalMem", 3020, a.cuDeviceTotalMem);
    resolve(get_proc, "cuDeviceGetUuid", 11040, a.cuDeviceGetUuid);
    resolve(get_proc, "cuDeviceGetPCIBusId", 4010, a.cuDeviceGetPCIBusId);
}

// The virtual-memory and pool-IPC entry points that more than one benchmark program calls (bench_contexts,
// bench_doctor_floor): a program's own Api derives from it and resolves them with resolve_vmm.
struct VmmApi {
    PFN_cuMemGetAllocationGranularity_v10020 cuMemGetAllocationGranularity = nullptr;
    PFN_cuMemCreate_v10020 cuMemCreate = nullptr;
    PFN_cuMemRelease_v10020 cuMemRelease = nullptr;
    PFN_cuMemAddressReserve_v10020 cuMemAddressReserve = nullptr;
    PFN_cuMemAddressFree_v10020 cuMemAddressFree = nullptr;
    PFN_cuMemMap_v10020 cuMemMap = nullptr;
    PFN_cuMemUnmap_v10020 cuMemUnmap = nullptr;
    PFN_cuMemSetAccess_v10020 cuMemSetAccess = nullptr;
    PFN_cuMemExportToShareableHandle_v10020 cuMemExportToShareableHandle = nullptr;
    PFN_cuMemImportFromShareableHandle_v10020 cuMemImportFromShareableHandle = nullptr;
    PFN_cuMemPoolCreate_v11020 cuMemPoolCreate = nullptr;
    PFN_cuMemPoolDestroy_v11020 cuMemPoolDestroy = nullptr;
    PFN_cuMemPoolExportToShareableHandle_v11020 cuMemPoolExportToShareableHandle = nullptr;
};

inline void resolve_vmm(PFN_cuGetProcAddress_v12000 get_proc, VmmApi& a) {
    resolve(get_proc, "cuMemGetAllocationGranularity", 10020, a.cuMemGetAllocationGranularity);
    resolve(get_proc, "cuMemCreate", 10020, a.cuMemCreate);
    resolve(get_proc, "cuMemRelease", 10020, a.cuMemRelease);
    resolve(get_proc, "cuMemAddressReserve", 10020, a.cuMemAddressReserve);
    resolve(get_proc, "cuMemAddressFree", 10020, a.cuMemAddressFree);
    resolve(get_proc, "cuMemMap", 10020, a.cuMemMap);
    resolve(get_proc, "cuMemUnmap", 10020, a.cuMemUnmap);
    resolve(get_proc, "cuMemSetAccess", 10020, a.cuMemSetAccess);
    resolve(get_proc, "cuMemExportToShareableHandle", 10020, a.cuMemExportToShareableHandle);
    resolve(get_proc, "cuMemImportFromShareableHandle", 10020, a.cuMemImportFromShareableHandle);
    resolve(get_proc, "cuMemPoolCreate", 11020, a.cuMemPoolCreate);
    resolve(get_proc, "cuMemPoolDestroy", 11020, a.cuMemPoolDestroy);
    resolve(get_proc, "cuMemPoolExportToShareableHandle", 11020, a.cuMemPoolExportToShareableHandle);
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
