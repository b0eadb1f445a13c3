/* Test header, not a toolkit header: the toolkit's cudaTypedefs.h plus the PFN typedefs of the logical
 * endpoint entry points that a CUDA 13.3 cudaTypedefs.h declares (see cuda.h beside this file). */
#ifndef CUMEMCTL_TEST_CUDATYPEDEFS_H_13030
#define CUMEMCTL_TEST_CUDATYPEDEFS_H_13030

#include <cuda.h>
#include_next <cudaTypedefs.h>

#ifdef CUMEMCTL_TEST_CUDA_SHIM_DECLARES
typedef CUresult (CUDAAPI *PFN_cuLogicalEndpointIdReserve_v13030)(CUlogicalEndpointId *baseLeId, cuuint32_t count);
typedef CUresult (CUDAAPI *PFN_cuLogicalEndpointIdRelease_v13030)(CUlogicalEndpointId baseLeId, cuuint32_t count);
typedef CUresult (CUDAAPI *PFN_cuLogicalEndpointCreate_v13030)(CUlogicalEndpointId leId, const CUlogicalEndpointProp *prop);
typedef CUresult (CUDAAPI *PFN_cuLogicalEndpointAddDevice_v13030)(CUlogicalEndpointId leId, CUdevice dev);
typedef CUresult (CUDAAPI *PFN_cuLogicalEndpointQuery_v13030)(CUlogicalEndpointId leId, cuuint32_t count, int *queryStatus);
typedef CUresult (CUDAAPI *PFN_cuLogicalEndpointGetLimits_v13030)(cuuint64_t *bindAlignment, cuuint64_t *maxSize,
                                                                  const CUlogicalEndpointProp *prop);
typedef CUresult (CUDAAPI *PFN_cuLogicalEndpointBindMem_v13030)(CUlogicalEndpointId leId, CUdevice dev, cuuint64_t offset,
                                                                CUmemGenericAllocationHandle memHandle,
                                                                cuuint64_t memOffset, cuuint64_t size,
                                                                unsigned long long flags);
typedef CUresult (CUDAAPI *PFN_cuLogicalEndpointBindAddr_v13030)(CUlogicalEndpointId leId, CUdevice dev, cuuint64_t offset,
                                                                 void *ptr, cuuint64_t size, unsigned long long flags);
typedef CUresult (CUDAAPI *PFN_cuLogicalEndpointUnbind_v13030)(CUlogicalEndpointId leId, CUdevice dev, cuuint64_t offset,
                                                               cuuint64_t size);
typedef CUresult (CUDAAPI *PFN_cuLogicalEndpointExport_v13030)(void *handle, CUlogicalEndpointId leId,
                                                               CUlogicalEndpointIpcHandleType handleType);
typedef CUresult (CUDAAPI *PFN_cuLogicalEndpointImport_v13030)(CUlogicalEndpointId leId, const void *handle,
                                                               CUlogicalEndpointIpcHandleType handleType);
typedef CUresult (CUDAAPI *PFN_cuLogicalEndpointDestroy_v13030)(CUlogicalEndpointId leId);
typedef CUresult (CUDAAPI *PFN_cuDevSmResourceSplit_v13010)(CUdevResource *result, unsigned int nbGroups,
                                                             const CUdevResource *input, CUdevResource *remainder,
                                                             unsigned int flags,
                                                             CU_DEV_SM_RESOURCE_GROUP_PARAMS *groupParams);
#endif

#endif /* CUMEMCTL_TEST_CUDATYPEDEFS_H_13030 */
