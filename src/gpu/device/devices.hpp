// Devices and what their memory system supports, read from device attributes without a context
// (free memory aside, which the driver reports only through a context).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "cuda/driver.hpp"
#include "gpu/device/device_selector.hpp"
#include "gpu/device/locality.hpp"
#include "nvml/fabric_info.hpp"
#include "nvml/memory_health.hpp"

namespace cumemctl::gpu {

// One memory capability: a stable key for JSON, a label for tables, the attribute it comes from, and
// the driver's answer (nullopt where this driver does not know the attribute: "unknown", not "no").
struct Capability {
    std::string_view key;
    std::string_view label;
    int attribute = 0;
    std::optional<int> value;
    int needs_driver = 0;  // the CUDA version that knows the attribute (13030 for logical endpoints): a
                           // driver that says it is older is not asked, and the value stays unknown
};

// What `devices` reports for one device.
struct DeviceInfo {
    int ordinal = 0;
    std::string name;
    std::string uuid;                    // GPU-xxxxxxxx-xxxx-..., empty where the driver lacks cuDeviceGetUuid
    std::string pci_bus_id;              // 00000000:3B:00.0 (nvidia-smi's form), empty where unknown
    std::optional<unsigned> nvml_index;  // nvidia-smi's index, where NVML lists the device (query_memory)
    std::optional<unsigned> nvml_minor;  // its /dev/nvidiaN's N, from NVML (query_memory)
    int cc_major = 0;
    int cc_minor = 0;
    std::uint64_t total_bytes = 0;
    std::optional<std::uint64_t> free_bytes;  // nullopt where neither NVML nor a context gave it
    std::string free_error;                   // why free memory is unknown
    // Where free memory came from: "nvml" (device-wide, no context), "context" (cuMemGetInfo in this
    // process's primary context, which itself takes some), or "" when it is unknown or not asked.
    std::string free_source;
    std::string nvml_error;                  // why NVML gave nothing for this device, when it did not
    std::optional<nvml::MemoryHealth> nvml;  // what NVML knows of the device's memory
    std::optional<nvml::FabricInfo> fabric;  // its multi-node NVLink fabric, as NVML reports it
    std::vector<Capability> capabilities;
    LocalityInfo locality;  // CUDA 13.4 locality domains (devices fills it, with a small allocation)
};

// The device's names (ordinal, UUID, bus id, NVML index and minor number, name) as DeviceIdentity.
DeviceIdentity identity_of(const DeviceInfo& info);

// The memory capabilities `devices` reports, in table order.
const std::vector<Capability>& capability_catalogue();

// The driver's CUDA version (cuDriverGetVersion: 13000 for 13.0), 0 where it does not say.
int driver_version(const DriverApi& api);

// Reads an attribute; nullopt where the driver refuses it as unknown (CUDA_ERROR_INVALID_VALUE).
std::optional<int> device_attribute(const DriverApi& api, int ordinal, int attribute);

// Everything but free memory; needs no context.
DeviceInfo query_device(const DriverApi& api, int ordinal);

// Fills free_bytes for each device through its primary context, one thread per device; a device
// whose context cannot be made keeps free_bytes empty and says why in free_error.
void query_free_memory(const DriverApi& api, std::vector<DeviceInfo>& devices);

// Fills `nvml` and free_bytes from NVML for each device NVML finds by UUID (no context); the devices it
// cannot answer for keep their reason in nvml_error. With `free_memory`, those devices get free memory
// through their primary context instead (query_free_memory).
void query_memory(const DriverApi& api, const nvml::Library& nvml, std::vector<DeviceInfo>& devices, bool free_memory);

// A capability's answer as reports write it: none where the driver does not know the attribute,
// host_numa_id as a number, pool_handle_types and gpudirect_rdma_flush_writes as lists of names,
// gpudirect_rdma_writes_ordering as a name, every other one yes or no.
using CapabilityValue = std::variant<std::monostate, bool, int, std::string, std::vector<std::string>>;
CapabilityValue capability_value(const Capability& cap);

// The capabilities as reports write them: their capability_value by key, none as null.
nlohmann::json capabilities_json(const std::vector<Capability>& capabilities);

// Names the bits of CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS: "host" (cuFlushGPUDirectRDMAWrites),
// "memops" (the stream memory operations' flush).
std::vector<std::string> flush_option_names(int mask);

// Names CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING: "none", "owner" (the owning device consumes
// remote writes in order), "all-devices", or "unknown (N)".
std::string writes_ordering_name(int value);

// Names the bits of a CUmemAllocationHandleType mask: "posix-fd", "win32", "win32-kmt", "fabric".
std::vector<std::string> handle_type_names(int mask);

// How a second process that works on one device sees it: with CUDA_VISIBLE_DEVICES set to the device's
// UUID the child initialises only that device (cuInit costs more with every visible GPU: 167 ms with one
// of two H200s visible, 307 ms with both) and knows it as ordinal 0. Where the UUID is unknown, or this
// process itself sees MIG instances through CUDA_VISIBLE_DEVICES, the child sees what this process sees.
struct ChildDeviceView {
    int ordinal = 0;                                       // the device's ordinal in the child
    std::vector<std::pair<std::string, std::string>> env;  // to set in the child's environment
};
ChildDeviceView child_device_view(const DriverApi& api, int ordinal);

// Formats a CUuuid as NVIDIA tools do: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx.
std::string format_uuid(const CUuuid& uuid);

}  // namespace cumemctl::gpu
