// CUDA 13.3 logical endpoints, declared here for toolkits whose cuda.h predates them (CUDA_VERSION < 13030).
// Types, layout and entry points follow shared/cuda-facts.md. With a 13.3 or newer cuda.h this header
// declares nothing of its own and the toolkit's declarations are used.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include <cstddef>

#if CUDA_VERSION < 13030

typedef cuuint32_t CUlogicalEndpointId;

typedef enum CUlogicalEndpointType_enum {
    CU_LOGICAL_ENDPOINT_TYPE_INVALID = 0,
    CU_LOGICAL_ENDPOINT_TYPE_UNICAST = 1,
    CU_LOGICAL_ENDPOINT_TYPE_MULTICAST = 2
} CUlogicalEndpointType;

typedef enum CUlogicalEndpointFlag_enum {
    CU_LOGICAL_ENDPOINT_FLAG_NONE = 0,
    CU_LOGICAL_ENDPOINT_FLAG_COUNTED_OPS = 1
} CUlogicalEndpointFlag;

typedef enum CUlogicalEndpointIpcHandleType_enum {
    CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_NONE = 0,
    CU_LOGICAL_ENDPOINT_IPC_HANDLE_TYPE_FABRIC = 1
} CUlogicalEndpointIpcHandleType;

typedef struct CUlogicalEndpointFabricHandle_st {
    unsigned char data[64];
} CUlogicalEndpointFabricHandle;

typedef struct CUlogicalEndpointProp_st {
    CUlogicalEndpointType type;
    union {
        struct {
            CUdevice device;
        } unicast;
        struct {
            unsigned int numDevices;
        } multicast;
    };
    unsigned long long size;
    unsigned int ipcHandleTypes;
    unsigned int flags;
} CUlogicalEndpointProp;

static_assert(sizeof(CUlogicalEndpointProp) == 24, "CUlogicalEndpointProp ABI: 24 bytes");

typedef CUresult(CUDAAPI* PFN_cuLogicalEndpointIdReserve_v13030)(CUlogicalEndpointId* baseLeId, cuuint32_t count);
typedef CUresult(CUDAAPI* PFN_cuLogicalEndpointIdRelease_v13030)(CUlogicalEndpointId baseLeId, cuuint32_t count);
typedef CUresult(CUDAAPI* PFN_cuLogicalEndpointCreate_v13030)(CUlogicalEndpointId leId,
                                                              const CUlogicalEndpointProp* prop);
typedef CUresult(CUDAAPI* PFN_cuLogicalEndpointAddDevice_v13030)(CUlogicalEndpointId leId, CUdevice dev);
typedef CUresult(CUDAAPI* PFN_cuLogicalEndpointQuery_v13030)(CUlogicalEndpointId leId, cuuint32_t count,
                                                             int* queryStatus);
typedef CUresult(CUDAAPI* PFN_cuLogicalEndpointGetLimits_v13030)(cuuint64_t* bindAlignment, cuuint64_t* maxSize,
                                                                 const CUlogicalEndpointProp* prop);
typedef CUresult(CUDAAPI* PFN_cuLogicalEndpointBindMem_v13030)(CUlogicalEndpointId leId, CUdevice dev,
                                                               cuuint64_t offset,
                                                               CUmemGenericAllocationHandle memHandle,
                                                               cuuint64_t memOffset, cuuint64_t size,
                                                               unsigned long long flags);
typedef CUresult(CUDAAPI* PFN_cuLogicalEndpointBindAddr_v13030)(CUlogicalEndpointId leId, CUdevice dev,
                                                                cuuint64_t offset, void* ptr, cuuint64_t size,
                                                                unsigned long long flags);
typedef CUresult(CUDAAPI* PFN_cuLogicalEndpointUnbind_v13030)(CUlogicalEndpointId leId, CUdevice dev, cuuint64_t offset,
                                                              cuuint64_t size);
typedef CUresult(CUDAAPI* PFN_cuLogicalEndpointExport_v13030)(void* handle, CUlogicalEndpointId leId,
                                                              CUlogicalEndpointIpcHandleType type);
typedef CUresult(CUDAAPI* PFN_cuLogicalEndpointImport_v13030)(CUlogicalEndpointId leId, const void* handle,
                                                              CUlogicalEndpointIpcHandleType type);
typedef CUresult(CUDAAPI* PFN_cuLogicalEndpointDestroy_v13030)(CUlogicalEndpointId leId);

#endif  // CUDA_VERSION < 13030

namespace cumemctl::le {

// Device attributes of CUDA 13.3 (CUdevice_attribute), by number so that older headers compile.
inline constexpr int kAttrUnicastSupported = 153;
inline constexpr int kAttrMulticastSupported = 154;
inline constexpr int kAttrCountedOpsSupported = 155;
inline constexpr int kAttrUnicastAccessOnOwnerSupported = 156;
// The CUDA version whose ABI the logical endpoint entry points are asked for.
inline constexpr int kVersion = 13030;

// Enumerator values of shared/cuda-facts.md, used by number (cast to the typedefs) so that code compiles
// whether this header or a 13.3 cuda.h declared the types, whatever the enumerators are called there.
inline constexpr int kTypeUnicast = 1;  // CUlogicalEndpointType
inline constexpr int kTypeMulticast = 2;
inline constexpr unsigned kFlagCountedOps = 1;  // CUlogicalEndpointFlag bit
inline constexpr int kIpcFabric = 1;            // CUlogicalEndpointIpcHandleType
// Bytes of a fabric handle (CUlogicalEndpointFabricHandle).
inline constexpr std::size_t kFabricHandleBytes = 64;

}  // namespace cumemctl::le
