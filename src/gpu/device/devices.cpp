#include "gpu/device/devices.hpp"

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <type_traits>

#include <fmt/format.h>

#include "base/enum_words.hpp"
#include "cuda/driver_call.hpp"
#include "gpu/device/primary_context.hpp"

namespace cumemctl::gpu {

const std::vector<Capability>& capability_catalogue() {
    static const std::vector<Capability> caps{
        {"vmm", "VMM (cuMemCreate)", CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, {}},
        {"memory_pools", "memory pools", CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, {}},
        {"pool_handle_types", "pool IPC handle types", CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES, {}},
        {"posix_fd", "POSIX-fd handles", CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, {}},
        {"fabric", "fabric handles", CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, {}},
        {"gpudirect_rdma_vmm",
         "GPUDirect RDMA with VMM",
         CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED,
         {}},
        {"gpudirect_rdma", "GPUDirect RDMA", CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED, {}},
        {"dma_buf", "dma-buf export", CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, {}},
        {"gpudirect_rdma_flush_writes",
         "GPUDirect RDMA flush",
         CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS,
         {}},
        {"gpudirect_rdma_writes_ordering",
         "GPUDirect RDMA write ordering",
         CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING,
         {}},
        {"generic_compression", "generic compression", CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED, {}},
        {"host_numa_id", "host NUMA id", CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, {}},
        {"host_vmm", "host VMM", CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, {}},
        {"host_numa_vmm", "host-NUMA VMM", CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, {}},
        {"host_pools", "host pools", CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED, {}},
        {"host_numa_pools", "host-NUMA pools", CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED, {}},
        {"multicast", "multicast", CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, {}},
        {"le_unicast", "logical endpoints: unicast", le::kAttrUnicastSupported, {}, le::kVersion},
        {"le_multicast", "logical endpoints: multicast", le::kAttrMulticastSupported, {}, le::kVersion},
        {"le_counted_ops", "logical endpoints: counted ops", le::kAttrCountedOpsSupported, {}, le::kVersion},
        {"le_unicast_owner_access",
         "logical endpoints: owner access",
         le::kAttrUnicastAccessOnOwnerSupported,
         {},
         le::kVersion},
    };
    return caps;
}

DeviceIdentity identity_of(const DeviceInfo& info) {
    return {info.ordinal, info.uuid, info.pci_bus_id, info.nvml_index, info.nvml_minor, info.name};
}

int driver_version(const DriverApi& api) {
    int version = 0;
    if (api.cuDriverGetVersion == nullptr || api.cuDriverGetVersion(&version) != CUDA_SUCCESS) return 0;
    return version;
}

std::optional<int> device_attribute(const DriverApi& api, int ordinal, int attribute) {
    int value = 0;
    const CUresult r = api.cuDeviceGetAttribute(&value, static_cast<CUdevice_attribute>(attribute), ordinal);
    if (r == CUDA_ERROR_INVALID_VALUE) return std::nullopt;
    check(api, r, "cuDeviceGetAttribute");
    return value;
}

std::string format_uuid(const CUuuid& uuid) {
    std::string hex;
    for (int i = 0; i < 16; ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10) hex += '-';
        hex += fmt::format("{:02x}", static_cast<unsigned char>(uuid.bytes[i]));
    }
    return "GPU-" + hex;
}

DeviceInfo query_device(const DriverApi& api, int ordinal) {
    DeviceInfo info;
    info.ordinal = ordinal;
    CUdevice dev = 0;
    check(api, api.cuDeviceGet(&dev, ordinal), "cuDeviceGet");
    char name[256] = {};
    check(api, api.cuDeviceGetName(name, sizeof name, dev), "cuDeviceGetName");
    info.name = name;
    const DeviceIdentity id = device_identity(api, ordinal, nullptr);  // UUID and bus id, where the driver has them
    info.uuid = id.uuid;
    info.pci_bus_id = id.pci_bus_id;
    info.cc_major = device_attribute(api, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR).value_or(0);
    info.cc_minor = device_attribute(api, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR).value_or(0);
    size_t total = 0;
    check(api, api.cuDeviceTotalMem(&total, dev), "cuDeviceTotalMem");
    info.total_bytes = total;
    info.capabilities = capability_catalogue();
    const int version = driver_version(api);
    for (auto& cap : info.capabilities) {
        // An attribute newer than the driver is not asked: the driver refuses it by design (noise in a
        // user's own tracing), and its number may mean something else to it. A driver that gives no
        // version is asked.
        if (version == 0 || version >= cap.needs_driver) cap.value = device_attribute(api, dev, cap.attribute);
    }
    return info;
}

namespace {

// Free memory of one device through its primary context; the context is released again.
void read_free(const DriverApi& api, DeviceInfo& info) {
    try {
        const PrimaryContext context(api, info.ordinal);
        info.free_bytes = current_device_memory(api).free;
        info.free_source = "context";
    } catch (const Error& e) {
        info.free_error = e.what();
    }
}

// Free memory of each device through its primary context, one thread per device (none for one).
void read_free_each(const DriverApi& api, const std::vector<DeviceInfo*>& devices) {
    if (devices.size() == 1) {
        read_free(api, *devices.front());
        return;
    }
    std::vector<std::thread> threads;
    threads.reserve(devices.size());
    for (DeviceInfo* d : devices) threads.emplace_back([&api, d] { read_free(api, *d); });
    for (auto& t : threads) t.join();
}

}  // namespace

void query_free_memory(const DriverApi& api, std::vector<DeviceInfo>& devices) {
    std::vector<DeviceInfo*> all;
    for (auto& d : devices) all.push_back(&d);
    read_free_each(api, all);
}

void query_memory(const DriverApi& api, const nvml::Library& nvml, std::vector<DeviceInfo>& devices, bool free_memory) {
    std::vector<DeviceInfo*> by_context;
    for (auto& d : devices) {
        std::string why;
        const auto handle = d.uuid.empty() ? std::nullopt : nvml.device_by_uuid(d.uuid, &why);
        if (!handle) {
            d.nvml_error = d.uuid.empty() ? "the driver gives no UUID to find the device in NVML by" : why;
        } else {
            d.nvml_index = nvml.index_of(d.uuid);
            d.nvml_minor = nvml.minor_of(d.uuid);
            d.nvml = nvml::query_memory_health(nvml, *handle);
            d.fabric = nvml::query_fabric_info(nvml, *handle);
            if (d.nvml->free) {
                d.free_bytes = d.nvml->free;
                d.free_source = "nvml";
                continue;
            }
        }
        by_context.push_back(&d);
    }
    if (!free_memory || by_context.empty()) return;
    read_free_each(api, by_context);
}

ChildDeviceView child_device_view(const DriverApi& api, int ordinal) {
    ChildDeviceView view{ordinal, {}};
    if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"); visible != nullptr && std::strstr(visible, "MIG")) {
        return view;
    }
    CUdevice dev = 0;
    CUuuid uuid{};
    if (api.cuDeviceGetUuid == nullptr || api.cuDeviceGet(&dev, ordinal) != CUDA_SUCCESS ||
        api.cuDeviceGetUuid(&uuid, dev) != CUDA_SUCCESS) {
        return view;
    }
    view.ordinal = 0;
    view.env = {{"CUDA_VISIBLE_DEVICES", format_uuid(uuid)}};
    return view;
}

CapabilityValue capability_value(const Capability& cap) {
    if (!cap.value) return std::monostate{};
    if (cap.key == "host_numa_id") return *cap.value;
    if (cap.key == "pool_handle_types") return handle_type_names(*cap.value);
    if (cap.key == "gpudirect_rdma_flush_writes") return flush_option_names(*cap.value);
    if (cap.key == "gpudirect_rdma_writes_ordering") return writes_ordering_name(*cap.value);
    return *cap.value != 0;
}

nlohmann::json capabilities_json(const std::vector<Capability>& capabilities) {
    auto json = [](const auto& value) -> nlohmann::json {
        if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::monostate>) {
            return nullptr;
        } else {
            return value;
        }
    };
    nlohmann::json caps = nlohmann::json::object();
    for (const auto& cap : capabilities) caps[std::string(cap.key)] = std::visit(json, capability_value(cap));
    return caps;
}

std::vector<std::string> flush_option_names(int mask) {
    std::vector<std::string> names;
    if (mask & CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_HOST) names.emplace_back("host");
    if (mask & CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_MEMOPS) names.emplace_back("memops");
    return names;
}

namespace {

constexpr auto kWritesOrderingWords = enum_words<int>({{CU_GPU_DIRECT_RDMA_WRITES_ORDERING_NONE, "none"},
                                                       {CU_GPU_DIRECT_RDMA_WRITES_ORDERING_OWNER, "owner"},
                                                       {CU_GPU_DIRECT_RDMA_WRITES_ORDERING_ALL_DEVICES, "all-devices"}},
                                                      "");

}  // namespace

std::string writes_ordering_name(int value) {
    if (const auto word = kWritesOrderingWords.find(value)) return std::string(*word);
    return fmt::format("unknown ({})", value);
}

std::vector<std::string> handle_type_names(int mask) {
    std::vector<std::string> names;
    if (mask & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) names.emplace_back("posix-fd");
    if (mask & CU_MEM_HANDLE_TYPE_WIN32) names.emplace_back("win32");
    if (mask & CU_MEM_HANDLE_TYPE_WIN32_KMT) names.emplace_back("win32-kmt");
    if (mask & CU_MEM_HANDLE_TYPE_FABRIC) names.emplace_back("fabric");
    return names;
}

}  // namespace cumemctl::gpu
