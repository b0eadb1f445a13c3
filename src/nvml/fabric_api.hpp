// NVML's GPU fabric structures (multi-node NVLink), declared from the ABI facts of
// ../shared/mnnvl-facts.md §1.2 (NVML's public header, 12.0 to 13.3; offsets checked with gcc): v1 for
// nvmlDeviceGetGpuFabricInfo, v2 and v3 for nvmlDeviceGetGpuFabricInfoV, whose `version` is set first.
// The state is one byte (nvmlGpuFabricState_t is an unsigned char): callers zero the whole struct.
#pragma once

namespace cumemctl::nvml {

// NVML_GPU_FABRIC_UUID_LEN.
inline constexpr unsigned kFabricUuidLength = 16;

// nvmlGpuFabricInfo_t (v1): no version field.
struct GpuFabricInfoV1 {
    unsigned char clusterUuid[kFabricUuidLength];
    int status;  // nvmlReturn_t; meaningful only when state is COMPLETED
    unsigned int cliqueId;
    unsigned char state;
};

// nvmlGpuFabricInfo_v2_t: v1 behind a version word, and the health mask.
struct GpuFabricInfoV2 {
    unsigned int version;
    unsigned char clusterUuid[kFabricUuidLength];
    int status;
    unsigned int cliqueId;
    unsigned char state;
    unsigned int healthMask;
};

// nvmlGpuFabricInfo_v3_t: v2 and the health summary (13.0 headers on, R580 drivers).
struct GpuFabricInfoV3 {
    unsigned int version;
    unsigned char clusterUuid[kFabricUuidLength];
    int status;
    unsigned int cliqueId;
    unsigned char state;
    unsigned int healthMask;
    unsigned char healthSummary;
};

// NVML_STRUCT_VERSION: the size with the version in the top byte (0x02000024, 0x03000028).
inline constexpr unsigned kGpuFabricInfoV2Version = static_cast<unsigned>(sizeof(GpuFabricInfoV2)) | (2U << 24);
inline constexpr unsigned kGpuFabricInfoV3Version = static_cast<unsigned>(sizeof(GpuFabricInfoV3)) | (3U << 24);

static_assert(sizeof(GpuFabricInfoV1) == 28 && sizeof(GpuFabricInfoV2) == 36 && sizeof(GpuFabricInfoV3) == 40,
              "NVML's fabric layouts (mnnvl-facts.md 1.2)");
static_assert(kGpuFabricInfoV2Version == 0x02000024U && kGpuFabricInfoV3Version == 0x03000028U,
              "NVML's fabric version words");

// nvmlGpuFabricState_t.
inline constexpr unsigned char kFabricStateNotSupported = 0;
inline constexpr unsigned char kFabricStateNotStarted = 1;
inline constexpr unsigned char kFabricStateInProgress = 2;
inline constexpr unsigned char kFabricStateCompleted = 3;

}  // namespace cumemctl::nvml
