/* Test header, not a toolkit header: stands in for a CUDA 13.3 cuda.h on a machine whose toolkit is
 * older. It includes the toolkit's own cuda.h, then says CUDA_VERSION 13030 and declares the logical
 * endpoint types and entry points itself, as a 13.3 cuda.h does (shared/cuda-facts.md). Code compiled
 * with this directory first on the include path must build without src/cuda/logical_endpoint_compat.hpp
 * declaring anything: a second declaration of these types would not compile. */
#ifndef CUMEMCTL_TEST_CUDA_H_13030
#define CUMEMCTL_TEST_CUDA_H_13030

#include_next <cuda.h>

/* Tells tests that this header, not the toolkit's alone, was included. */
#define CUMEMCTL_TEST_CUDA_SHIM 1

#if CUDA_VERSION < 13030
#undef CUDA_VERSION
#define CUDA_VERSION 13030
/* This header declares the 13.3 types (a 13.3 or newer toolkit declares them itself). */
#define CUMEMCTL_TEST_CUDA_SHIM_DECLARES 1

#ifdef __cplusplus
extern "C" {
#endif

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

CUresult CUDAAPI cuLogicalEndpointIdReserve(CUlogicalEndpointId *baseLeId, cuuint32_t count);
CUresult CUDAAPI cuLogicalEndpointIdRelease(CUlogicalEndpointId baseLeId, cuuint32_t count);
CUresult CUDAAPI cuLogicalEndpointCreate(CUlogicalEndpointId leId, const CUlogicalEndpointProp *prop);
CUresult CUDAAPI cuLogicalEndpointAddDevice(CUlogicalEndpointId leId, CUdevice dev);
CUresult CUDAAPI cuLogicalEndpointQuery(CUlogicalEndpointId leId, cuuint32_t count, int *queryStatus);
CUresult CUDAAPI cuLogicalEndpointGetLimits(cuuint64_t *bindAlignment, cuuint64_t *maxSize,
                                            const CUlogicalEndpointProp *prop);
CUresult CUDAAPI cuLogicalEndpointBindMem(CUlogicalEndpointId leId, CUdevice dev, cuuint64_t offset,
                                          CUmemGenericAllocationHandle memHandle, cuuint64_t memOffset,
                                          cuuint64_t size, unsigned long long flags);
CUresult CUDAAPI cuLogicalEndpointBindAddr(CUlogicalEndpointId leId, CUdevice dev, cuuint64_t offset, void *ptr,
                                           cuuint64_t size, unsigned long long flags);
CUresult CUDAAPI cuLogicalEndpointUnbind(CUlogicalEndpointId leId, CUdevice dev, cuuint64_t offset, cuuint64_t size);
CUresult CUDAAPI cuLogicalEndpointExport(void *handle, CUlogicalEndpointId leId, CUlogicalEndpointIpcHandleType handleType);
CUresult CUDAAPI cuLogicalEndpointImport(CUlogicalEndpointId leId, const void *handle,
                                         CUlogicalEndpointIpcHandleType handleType);
CUresult CUDAAPI cuLogicalEndpointDestroy(CUlogicalEndpointId leId);

/* The SM split of CUDA 13.1, as 13.1 to 13.3 declare it: no localityDomainId yet (13.4 carves it out of
 * reserved[0]); src/cuda/locality_compat.hpp must then declare neither. */
typedef struct CU_DEV_SM_RESOURCE_GROUP_PARAMS_st {
    unsigned int smCount;
    unsigned int coscheduledSmCount;
    unsigned int preferredCoscheduledSmCount;
    unsigned int flags;
    unsigned int reserved[12];
} CU_DEV_SM_RESOURCE_GROUP_PARAMS;
CUresult CUDAAPI cuDevSmResourceSplit(CUdevResource *result, unsigned int nbGroups, const CUdevResource *input,
                                      CUdevResource *remainder, unsigned int flags,
                                      CU_DEV_SM_RESOURCE_GROUP_PARAMS *groupParams);

#ifdef __cplusplus
}
#endif

#endif /* CUDA_VERSION < 13030 */
#endif /* CUMEMCTL_TEST_CUDA_H_13030 */
