// The driver table: one X-macro list names every entry point cumemctl uses, the CUDA version whose ABI
// it is asked for (the oldest with the signature used here), and whether the tool can start without it.
// The function pointer types are the toolkit's PFN_<name>_v<version> typedefs (cudaTypedefs.h) or, for
// logical endpoints and cuDevSmResourceSplit, those of logical_endpoint_compat.hpp and locality_compat.hpp.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include <string_view>

#include "cuda/locality_compat.hpp"
#include "cuda/logical_endpoint_compat.hpp"

// X(name, version, required): required entry points must resolve for the driver to count as loaded.
#define CUMEMCTL_DRIVER_ENTRY_POINTS(X)                     \
    X(cuGetErrorName, 6000, true)                           \
    X(cuGetErrorString, 6000, true)                         \
    X(cuInit, 2000, true)                                   \
    X(cuDriverGetVersion, 2020, true)                       \
    X(cuDeviceGetCount, 2000, true)                         \
    X(cuDeviceGet, 2000, true)                              \
    X(cuDeviceGetName, 2000, true)                          \
    X(cuDeviceGetAttribute, 2000, true)                     \
    X(cuDeviceTotalMem, 3020, true)                         \
    X(cuDeviceGetUuid, 11040, false)                        \
    X(cuDeviceGetPCIBusId, 4010, false)                     \
    X(cuDeviceCanAccessPeer, 4000, false)                   \
    X(cuDevicePrimaryCtxRetain, 7000, false)                \
    X(cuDevicePrimaryCtxRelease, 11000, false)              \
    X(cuCtxSetCurrent, 4000, false)                         \
    X(cuCtxGetCurrent, 4000, false)                         \
    X(cuCtxGetDevice, 2000, false)                          \
    X(cuCtxGetId, 12000, false)                             \
    X(cuCtxSynchronize, 2000, false)                        \
    X(cuCtxEnablePeerAccess, 4000, false)                   \
    X(cuCtxDisablePeerAccess, 4000, false)                  \
    X(cuMemGetInfo, 3020, false)                            \
    X(cuMemAlloc, 3020, false)                              \
    X(cuMemFree, 3020, false)                               \
    X(cuMemcpyDtoH, 3020, false)                            \
    X(cuMemcpyHtoD, 3020, false)                            \
    X(cuMemcpyDtoD, 3020, false)                            \
    X(cuMemcpyHtoDAsync, 3020, false)                       \
    X(cuMemcpyDtoHAsync, 3020, false)                       \
    X(cuMemcpyDtoDAsync, 3020, false)                       \
    X(cuMemcpyAsync, 4000, false)                           \
    X(cuMemcpyPeerAsync, 4000, false)                       \
    X(cuMemHostAlloc, 2020, false)                          \
    X(cuMemFreeHost, 2000, false)                           \
    X(cuMemHostGetDevicePointer, 3020, false)               \
    X(cuMemsetD8, 3020, false)                              \
    X(cuMemsetD32, 3020, false)                             \
    X(cuModuleLoadData, 2000, false)                        \
    X(cuModuleGetFunction, 2000, false)                     \
    X(cuModuleUnload, 2000, false)                          \
    X(cuLaunchKernel, 4000, false)                          \
    X(cuStreamCreate, 2000, false)                          \
    X(cuStreamDestroy, 4000, false)                         \
    X(cuStreamSynchronize, 2000, false)                     \
    X(cuStreamWaitEvent, 3020, false)                       \
    X(cuStreamWaitValue32, 11070, false)                    \
    X(cuEventCreate, 2000, false)                           \
    X(cuEventRecord, 2000, false)                           \
    X(cuEventSynchronize, 2000, false)                      \
    X(cuEventQuery, 2000, false)                            \
    X(cuEventElapsedTime, 2000, false)                      \
    X(cuEventDestroy, 4000, false)                          \
    X(cuMemGetAllocationGranularity, 10020, false)          \
    X(cuMemCreate, 10020, false)                            \
    X(cuMemRelease, 10020, false)                           \
    X(cuMemAddressReserve, 10020, false)                    \
    X(cuMemAddressFree, 10020, false)                       \
    X(cuMemMap, 10020, false)                               \
    X(cuMemUnmap, 10020, false)                             \
    X(cuMemSetAccess, 10020, false)                         \
    X(cuMemGetAccess, 10020, false)                         \
    X(cuMemExportToShareableHandle, 10020, false)           \
    X(cuMemImportFromShareableHandle, 10020, false)         \
    X(cuMemGetAllocationPropertiesFromHandle, 10020, false) \
    X(cuMemGetHandleForAddressRange, 11070, false)          \
    X(cuDeviceGetDefaultMemPool, 11020, false)              \
    X(cuDeviceGetMemPool, 11020, false)                     \
    X(cuDeviceSetMemPool, 11020, false)                     \
    X(cuMemPoolCreate, 11020, false)                        \
    X(cuMemPoolDestroy, 11020, false)                       \
    X(cuMemPoolGetAttribute, 11020, false)                  \
    X(cuMemPoolSetAttribute, 11020, false)                  \
    X(cuMemPoolTrimTo, 11020, false)                        \
    X(cuMemPoolSetAccess, 11020, false)                     \
    X(cuMemPoolGetAccess, 11020, false)                     \
    X(cuMemAllocAsync, 11020, false)                        \
    X(cuMemAllocFromPoolAsync, 11020, false)                \
    X(cuMemFreeAsync, 11020, false)                         \
    X(cuMemPoolExportToShareableHandle, 11020, false)       \
    X(cuMemPoolImportFromShareableHandle, 11020, false)     \
    X(cuMemPoolExportPointer, 11020, false)                 \
    X(cuMemPoolImportPointer, 11020, false)                 \
    X(cuMemGetDefaultMemPool, 13000, false)                 \
    X(cuMemGetMemPool, 13000, false)                        \
    X(cuMemSetMemPool, 13000, false)                        \
    X(cuLogicalEndpointIdReserve, 13030, false)             \
    X(cuLogicalEndpointIdRelease, 13030, false)             \
    X(cuLogicalEndpointCreate, 13030, false)                \
    X(cuLogicalEndpointAddDevice, 13030, false)             \
    X(cuLogicalEndpointQuery, 13030, false)                 \
    X(cuLogicalEndpointGetLimits, 13030, false)             \
    X(cuLogicalEndpointBindMem, 13030, false)               \
    X(cuLogicalEndpointBindAddr, 13030, false)              \
    X(cuLogicalEndpointUnbind, 13030, false)                \
    X(cuLogicalEndpointExport, 13030, false)                \
    X(cuLogicalEndpointImport, 13030, false)                \
    X(cuLogicalEndpointDestroy, 13030, false)               \
    X(cuPointerGetAttribute, 4000, false)                   \
    X(cuDeviceGetDevResource, 12040, false)                 \
    X(cuDevResourceGenerateDesc, 12040, false)              \
    X(cuDevSmResourceSplit, 13010, false)                   \
    X(cuGreenCtxCreate, 12040, false)                       \
    X(cuGreenCtxDestroy, 12040, false)                      \
    X(cuCtxFromGreenCtx, 12040, false)

namespace cumemctl {

// Every entry point as a typed function pointer; null where the driver lacks an optional one.
// Unit tests fill one from lambdas; Driver fills one through cuGetProcAddress.
struct DriverApi {
#define CUMEMCTL_DECLARE_ENTRY(name, version, required) PFN_##name##_v##version name = nullptr;
    CUMEMCTL_DRIVER_ENTRY_POINTS(CUMEMCTL_DECLARE_ENTRY)
#undef CUMEMCTL_DECLARE_ENTRY
};

// The CUDA version the table asks `name` at; 0 where `name` is no entry point of the table.
constexpr int entry_version(std::string_view name) {
#define CUMEMCTL_ENTRY_VERSION(entry, version, required) \
    if (name == #entry) return version;
    CUMEMCTL_DRIVER_ENTRY_POINTS(CUMEMCTL_ENTRY_VERSION)
#undef CUMEMCTL_ENTRY_VERSION
    return 0;
}

// An entry point as a caller names it ("cuMemCreate"), with the version the table gives it: the one
// place that version is written. Made while compiling from a literal; a name the table lacks does not
// compile.
struct EntryPoint {
    const char* name;
    int version;

    // Implicit: call sites write the name as a literal.
    consteval EntryPoint(const char* entry) : name(entry), version(entry_version(entry)) {
        if (version == 0) throw "not an entry point of CUMEMCTL_DRIVER_ENTRY_POINTS";
    }
};

}  // namespace cumemctl
