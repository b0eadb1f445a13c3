// CUDA 13.4 locality domains: every value cumemctl uses that a cuda.h older than 13.4 lacks, in one place
// to correct should a real 13.4 header prove one wrong. How many public sources confirm each value:
// docs/locality.md, "How sure the numbers are". With a 13.4 or newer cuda.h nothing here is declared but
// the numbers, which are then checked against the header.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include <cstddef>

// cuDevSmResourceSplit came with CUDA 13.1; its group parameters as 13.4 lays them out (64 bytes,
// localityDomainId carved out of 13.1's reserved bytes at offset 16).
#if CUDA_VERSION < 13010
typedef struct CU_DEV_SM_RESOURCE_GROUP_PARAMS_st {
    unsigned int smCount;
    unsigned int coscheduledSmCount;
    unsigned int preferredCoscheduledSmCount;
    unsigned int flags;
    unsigned int localityDomainId;
    unsigned int reserved[11];
} CU_DEV_SM_RESOURCE_GROUP_PARAMS;

typedef CUresult(CUDAAPI* PFN_cuDevSmResourceSplit_v13010)(CUdevResource* result, unsigned int nbGroups,
                                                           const CUdevResource* input, CUdevResource* remainder,
                                                           unsigned int flags,
                                                           CU_DEV_SM_RESOURCE_GROUP_PARAMS* groupParams);
#endif  // CUDA_VERSION < 13010

static_assert(sizeof(CU_DEV_SM_RESOURCE_GROUP_PARAMS) == 64, "CU_DEV_SM_RESOURCE_GROUP_PARAMS ABI: 64 bytes");
static_assert(sizeof(CUmemLocation) == 8, "CUmemLocation ABI: 8 bytes (type, then id / localized)");
static_assert(sizeof(CUdevResource) == 144, "CUdevResource ABI: 144 bytes, the SM union at 96");

namespace cumemctl::locality {

// The first driver (cuDriverGetVersion) with locality domains.
inline constexpr int kDriverVersion = 13040;
// The version cuDevSmResourceSplit is asked for (it first came with 13.1).
inline constexpr int kSplitVersion = 13010;

// Device attributes (CUdevice_attribute). 149 and 157: three independent sources, one a real 13.4
// driver (high). 161: one source (TensorRT-LLM), and the enumeration's order would give 159 (low-medium).
inline constexpr int kAttrDomainCount = 149;
inline constexpr int kAttrSmsPerDomain = 157;
inline constexpr int kAttrRdmaWithLocalized = 161;

// CU_MEM_LOCATION_TYPE_DEVICE_LOCALITY_DOMAIN (medium-high: two sources and the order). Its id packs
// localized.deviceId in byte 0 and localized.localityDomainId in byte 1; bytes 2 and 3 are zero.
inline constexpr int kLocationType = 6;
// CU_POINTER_ATTRIBUTE_LOCALITY_DOMAIN_ORDINAL: an int, -1 for memory that is not localized (one
// source for the value: low-medium).
inline constexpr int kPointerAttrDomain = 24;
// CU_MEMPOOL_ATTR_LOCALITY_DOMAIN_ID: an int, -1 for a pool that is not localized (the value is
// inferred from the order: low).
inline constexpr int kPoolAttrDomain = 15;
// CU_MEMPOOL_ATTR_LOCATION_ID and CU_MEMPOOL_ATTR_LOCATION_TYPE (ints, CUDA 13.2; high: the 13.3
// bindings): how a pool's location is read back, to be decoded by its type.
inline constexpr int kPoolAttrLocationId = 11;
inline constexpr int kPoolAttrLocationType = 12;
// CU_MEM_CREATE_USAGE_GPU_DIRECT_RDMA_OVER_PCIE (high: the 13.4 macro list and TensorRT-LLM).
inline constexpr unsigned short kUsageRdmaOverPcie = 0x4;
// CU_DEV_SM_RESOURCE_GROUP_LOCALITY_DOMAIN_ID, in the group parameters' flags and the result's sm.flags.
inline constexpr unsigned int kGroupFlagDomain = 0x2;
// Where 13.4 keeps CUdevSmResource.flags and .localityDomainId in a CUdevResource (inferred from the
// field order: the SM union starts at 96 with smCount, minSmPartitionSize, smCoscheduledAlignment).
inline constexpr std::size_t kSmFlagsOffset = 108;
inline constexpr std::size_t kSmDomainOffset = 112;

// Ids of the localized form must each fit in a byte (localized.deviceId, localized.localityDomainId).
inline constexpr int kMaxId = 255;

// The packed id of a localized location (little-endian, as on every host the driver runs on).
inline constexpr int packed_id(int device, int domain) {
    return (device & 0xff) | ((domain & 0xff) << 8);
}
// localized.deviceId and localized.localityDomainId of a packed id; reserved bytes are id >> 16.
inline constexpr int device_of(int id) {
    return id & 0xff;
}
inline constexpr int domain_of(int id) {
    return (id >> 8) & 0xff;
}
inline constexpr bool reserved_clear(int id) {
    return (static_cast<unsigned>(id) >> 16) == 0;
}

}  // namespace cumemctl::locality

#if CUDA_VERSION >= 13040
static_assert(CU_MEM_LOCATION_TYPE_DEVICE_LOCALITY_DOMAIN == cumemctl::locality::kLocationType);
static_assert(CU_DEVICE_ATTRIBUTE_LOCALITY_DOMAIN_COUNT == cumemctl::locality::kAttrDomainCount);
static_assert(CU_DEVICE_ATTRIBUTE_LOCALITY_DOMAIN_MULTIPROCESSOR_COUNT == cumemctl::locality::kAttrSmsPerDomain);
static_assert(CU_MEM_CREATE_USAGE_GPU_DIRECT_RDMA_OVER_PCIE == cumemctl::locality::kUsageRdmaOverPcie);
#endif
