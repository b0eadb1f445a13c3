// The NVML seam's table: the few NVML types and entry points cumemctl uses, declared here because no
// nvml.h is installed where it builds (the ABI is that of NVML's public header, nvml.h, 12.0 to 13.3,
// x86-64). One X-macro list generates the table and its loading.
#pragma once

#include <cstdint>

namespace cumemctl::nvml {

// NVML's status: 0 success; the values cumemctl tells apart are named.
using Return = int;
inline constexpr Return kSuccess = 0;
inline constexpr Return kErrorUninitialized = 1;
inline constexpr Return kErrorInvalidArgument = 2;
inline constexpr Return kErrorNotSupported = 3;
inline constexpr Return kErrorNoPermission = 4;
inline constexpr Return kErrorNotFound = 6;
inline constexpr Return kErrorInsufficientSize = 7;
inline constexpr Return kErrorDriverNotLoaded = 9;
inline constexpr Return kErrorTimeout = 10;
inline constexpr Return kErrorLibraryNotFound = 12;
inline constexpr Return kErrorFunctionNotFound = 13;
inline constexpr Return kErrorGpuIsLost = 15;
inline constexpr Return kErrorResetRequired = 16;
inline constexpr Return kErrorInsufficientResources = 23;
inline constexpr Return kErrorArgumentVersionMismatch = 25;
inline constexpr Return kErrorUnknown = 999;

// An opaque device handle.
struct DeviceOpaque;
using Device = DeviceOpaque*;

// nvmlMemory_t: the v1 view, whose used includes the reserved memory.
struct Memory {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
};

// nvmlMemory_v2_t: the reserved memory split out; `version` must be kMemoryV2Version before the call.
struct MemoryV2 {
    unsigned int version;
    unsigned long long total;
    unsigned long long reserved;
    unsigned long long free;
    unsigned long long used;
};
inline constexpr unsigned int kMemoryV2Version = static_cast<unsigned int>(sizeof(MemoryV2)) | (2U << 24);

// nvmlBAR1Memory_t.
struct Bar1Memory {
    unsigned long long bar1Total;
    unsigned long long bar1Free;
    unsigned long long bar1Used;
};

// nvmlProcessInfo_t, the layout of nvmlProcessInfo_v2_t that nvmlDeviceGetComputeRunningProcesses_v3 (and
// _v2) fill; usedGpuMemory is all ones when NVML cannot say.
struct ProcessInfo {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
};
inline constexpr unsigned long long kValueNotAvailable = ~0ULL;

// nvmlProcessInfo_v1_t, what the unversioned nvmlDeviceGetComputeRunningProcesses of older NVMLs fills.
struct ProcessInfoV1 {
    unsigned int pid;
    unsigned long long usedGpuMemory;
};

// nvmlEventSet_t, an opaque set of registered events, and nvmlEventData_t: one event.
struct EventSetOpaque;
using EventSet = EventSetOpaque*;
struct EventData {
    Device device;
    unsigned long long eventType;
    unsigned long long eventData;  // the XID for an XID critical error
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
};
inline constexpr unsigned long long kEventTypeXidCriticalError = 0x8ULL;

// nvmlPageRetirementCause_t.
inline constexpr int kRetiredMultipleSingleBitEcc = 0;
inline constexpr int kRetiredDoubleBitEcc = 1;

// nvmlMemoryErrorType_t and nvmlEccCounterType_t.
inline constexpr int kEccCorrected = 0;
inline constexpr int kEccUncorrected = 1;
inline constexpr int kEccVolatile = 0;
inline constexpr int kEccAggregate = 1;

// nvmlFieldValue_t, what nvmlDeviceGetFieldValues fills: the caller sets fieldId and scopeId (a link's
// index for the C2C fields); NVML sets the rest, nvmlReturn per value.
struct FieldValue {
    unsigned int fieldId;
    unsigned int scopeId;
    long long timestamp;
    long long latencyUsec;
    int valueType;  // nvmlValueType_t: 1 unsigned int (value.uiVal), 3 unsigned long long
    Return nvmlReturn;
    union {
        double dVal;
        unsigned int uiVal;
        unsigned long ulVal;
        unsigned long long ullVal;
        signed long long sllVal;
    } value;
};
inline constexpr unsigned kFieldC2cLinkCount = 170;      // NVML_FI_DEV_C2C_LINK_COUNT
inline constexpr unsigned kFieldC2cLinkStatus = 171;     // NVML_FI_DEV_C2C_LINK_GET_STATUS: 1 active
inline constexpr unsigned kFieldC2cLinkMaxBw = 172;      // NVML_FI_DEV_C2C_LINK_GET_MAX_BW: MB/s of an active link
inline constexpr unsigned kFieldNvlinkSpeedCommon = 90;  // NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON: MB/s of active links
inline constexpr unsigned kFieldNvlinkLinkCount = 91;    // NVML_FI_DEV_NVLINK_LINK_COUNT
inline constexpr unsigned kFieldNvlinkGetSpeed = 164;    // NVML_FI_DEV_NVLINK_GET_SPEED: MB/s of link scopeId
inline constexpr unsigned kFieldNvlinkGetState = 165;    // NVML_FI_DEV_NVLINK_GET_STATE: 1 active
inline constexpr unsigned kNvlinkMaxLinks = 18;          // NVML_NVLINK_MAX_LINKS
inline constexpr int kValueTypeUnsignedInt = 1;
inline constexpr int kValueTypeUnsignedLongLong = 3;

// nvmlClockType_t: graphics, SM, memory.
inline constexpr int kClockGraphics = 0;
inline constexpr int kClockSm = 1;
inline constexpr int kClockMem = 2;

// nvmlAffinityScope_t: the NUMA node nearest the device (NVML_AFFINITY_SCOPE_NODE) or its socket.
inline constexpr int kAffinityScopeNode = 0;
inline constexpr int kAffinityScopeSocket = 1;

// Buffer sizes NVML documents.
inline constexpr unsigned kUuidBufferSize = 96;
inline constexpr unsigned kDriverVersionBufferSize = 80;
inline constexpr unsigned kProcessNameBufferSize = 256;  // a name longer than this comes back cut

static_assert(sizeof(Memory) == 24 && sizeof(MemoryV2) == 40 && sizeof(ProcessInfo) == 24 &&
                  sizeof(ProcessInfoV1) == 16 && sizeof(EventData) == 32 && sizeof(FieldValue) == 40,
              "NVML's layouts on x86-64");

}  // namespace cumemctl::nvml

#include "nvml/fabric_api.hpp"  // the fabric info structures (v1, v2, v3) behind the void* below

namespace cumemctl::nvml {

// The entry points: X(field, symbol, required, return type, parameters). Optional ones may be missing
// from an older or a fake library; their field is then null and callers treat them as unsupported.
#define CUMEMCTL_NVML_ENTRY_POINTS(X)                                                                                  \
    X(init, "nvmlInit_v2", true, Return, ())                                                                           \
    X(shutdown, "nvmlShutdown", true, Return, ())                                                                      \
    X(error_string, "nvmlErrorString", true, const char*, (Return))                                                    \
    X(device_get_count, "nvmlDeviceGetCount_v2", true, Return, (unsigned int*))                                        \
    X(device_get_handle_by_index, "nvmlDeviceGetHandleByIndex_v2", true, Return, (unsigned int, Device*))              \
    X(device_get_uuid, "nvmlDeviceGetUUID", true, Return, (Device, char*, unsigned int))                               \
    X(system_get_driver_version, "nvmlSystemGetDriverVersion", false, Return, (char*, unsigned int))                   \
    X(device_get_minor_number, "nvmlDeviceGetMinorNumber", false, Return, (Device, unsigned int*))                     \
    X(device_get_fabric_info, "nvmlDeviceGetGpuFabricInfo", false, Return, (Device, void*))                            \
    X(device_get_fabric_info_v, "nvmlDeviceGetGpuFabricInfoV", false, Return, (Device, void*))                         \
    X(device_get_memory_info, "nvmlDeviceGetMemoryInfo", false, Return, (Device, Memory*))                             \
    X(device_get_memory_info_v2, "nvmlDeviceGetMemoryInfo_v2", false, Return, (Device, MemoryV2*))                     \
    X(device_get_bar1_memory_info, "nvmlDeviceGetBAR1MemoryInfo", false, Return, (Device, Bar1Memory*))                \
    X(device_get_ecc_mode, "nvmlDeviceGetEccMode", false, Return, (Device, int*, int*))                                \
    X(device_get_total_ecc_errors, "nvmlDeviceGetTotalEccErrors", false, Return,                                       \
      (Device, int, int, unsigned long long*))                                                                         \
    X(device_get_remapped_rows, "nvmlDeviceGetRemappedRows", false, Return,                                            \
      (Device, unsigned int*, unsigned int*, unsigned int*, unsigned int*))                                            \
    X(device_get_persistence_mode, "nvmlDeviceGetPersistenceMode", false, Return, (Device, int*))                      \
    X(device_get_mig_mode, "nvmlDeviceGetMigMode", false, Return, (Device, unsigned int*, unsigned int*))              \
    X(device_get_compute_running_processes, "nvmlDeviceGetComputeRunningProcesses_v3", false, Return,                  \
      (Device, unsigned int*, ProcessInfo*))                                                                           \
    X(device_get_compute_running_processes_v1, "nvmlDeviceGetComputeRunningProcesses", false, Return,                  \
      (Device, unsigned int*, ProcessInfoV1*))                                                                         \
    X(system_get_process_name, "nvmlSystemGetProcessName", false, Return, (unsigned int, char*, unsigned int))         \
    X(device_get_retired_pages, "nvmlDeviceGetRetiredPages", false, Return,                                            \
      (Device, int, unsigned int*, unsigned long long*))                                                               \
    X(device_get_retired_pages_pending, "nvmlDeviceGetRetiredPagesPendingStatus", false, Return, (Device, int*))       \
    X(event_set_create, "nvmlEventSetCreate", false, Return, (EventSet*))                                              \
    X(device_get_supported_event_types, "nvmlDeviceGetSupportedEventTypes", false, Return,                             \
      (Device, unsigned long long*))                                                                                   \
    X(device_register_events, "nvmlDeviceRegisterEvents", false, Return, (Device, unsigned long long, EventSet))       \
    X(event_set_wait, "nvmlEventSetWait_v2", false, Return, (EventSet, EventData*, unsigned int))                      \
    X(event_set_free, "nvmlEventSetFree", false, Return, (EventSet))                                                   \
    X(device_get_curr_pcie_generation, "nvmlDeviceGetCurrPcieLinkGeneration", false, Return, (Device, unsigned*))      \
    X(device_get_curr_pcie_width, "nvmlDeviceGetCurrPcieLinkWidth", false, Return, (Device, unsigned*))                \
    X(device_get_max_pcie_generation, "nvmlDeviceGetMaxPcieLinkGeneration", false, Return, (Device, unsigned*))        \
    X(device_get_max_pcie_width, "nvmlDeviceGetMaxPcieLinkWidth", false, Return, (Device, unsigned*))                  \
    X(device_get_gpu_max_pcie_generation, "nvmlDeviceGetGpuMaxPcieLinkGeneration", false, Return, (Device, unsigned*)) \
    X(device_get_pcie_replay_counter, "nvmlDeviceGetPcieReplayCounter", false, Return, (Device, unsigned*))            \
    X(device_get_memory_bus_width, "nvmlDeviceGetMemoryBusWidth", false, Return, (Device, unsigned*))                  \
    X(device_get_max_clock_info, "nvmlDeviceGetMaxClockInfo", false, Return, (Device, int, unsigned*))                 \
    X(device_get_field_values, "nvmlDeviceGetFieldValues", false, Return, (Device, int, FieldValue*))                  \
    X(device_get_memory_affinity, "nvmlDeviceGetMemoryAffinity", false, Return,                                        \
      (Device, unsigned int, unsigned long*, int))                                                                     \
    X(device_get_cpu_affinity_within_scope, "nvmlDeviceGetCpuAffinityWithinScope", false, Return,                      \
      (Device, unsigned int, unsigned long*, int))                                                                     \
    X(device_get_cpu_affinity, "nvmlDeviceGetCpuAffinity", false, Return, (Device, unsigned int, unsigned long*))      \
    X(device_get_nvlink_state, "nvmlDeviceGetNvLinkState", false, Return, (Device, unsigned int, int*))                \
    X(device_get_clock_info, "nvmlDeviceGetClockInfo", false, Return, (Device, int, unsigned*))                        \
    X(device_get_clocks_event_reasons, "nvmlDeviceGetCurrentClocksEventReasons", false, Return,                        \
      (Device, unsigned long long*))                                                                                   \
    X(device_get_clocks_throttle_reasons, "nvmlDeviceGetCurrentClocksThrottleReasons", false, Return,                  \
      (Device, unsigned long long*))

// The table of entry points, one function pointer per entry of the list.
struct Api {
#define CUMEMCTL_NVML_FIELD(field, symbol, required, ret, params) ret(*field) params = nullptr;
    CUMEMCTL_NVML_ENTRY_POINTS(CUMEMCTL_NVML_FIELD)
#undef CUMEMCTL_NVML_FIELD
};

}  // namespace cumemctl::nvml
