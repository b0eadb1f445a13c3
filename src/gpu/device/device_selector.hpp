// A GPU as operators name it: --device takes CUDA ordinals, UUIDs (GPU-...) and PCI bus ids, and every
// per-device result carries the UUID, the PCI bus id and NVML's index beside the CUDA ordinal. CUDA
// counts fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID; nvidia-smi and NVML count in PCI order, so
// "GPU 1" of the two may be two GPUs on a node of mixed GPUs.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cuda/driver.hpp"

namespace cumemctl::nvml {
class Library;
}

namespace cumemctl::gpu {

// One GPU's names: the CUDA ordinal (this process's view), its UUID and PCI bus id ("" where the
// driver cannot say), and NVML's index (nvidia-smi's), nullopt without NVML or where NVML does not list it.
struct DeviceIdentity {
    int ordinal = 0;
    std::string uuid;
    std::string pci_bus_id;  // as nvidia-smi and dcgm-exporter write it: 00000000:3B:00.0
    std::optional<unsigned> nvml_index;
    std::optional<unsigned> minor;  // /dev/nvidiaN's N, from NVML
    std::string name;               // "NVIDIA H200"
};

// The identity of CUDA device `ordinal`: no context needed; `nvml` may be null.
DeviceIdentity device_identity(const DriverApi& api, int ordinal, const nvml::Library* nvml);

// {"ordinal", "uuid", "pci_bus_id", "nvml_index"}: null for what is unknown (the minor number and the
// name are for the metrics' labels).
nlohmann::json identity_json(const DeviceIdentity& id);

// A PCI bus id in nvidia-smi's form (8 hex digits of domain, upper-case hex: 00000000:3B:00.0), from
// any of "3b:00.0", "0000:3b:00.0", "00000000:3B:00.0"; nullopt when the text is not a bus id.
std::optional<std::string> normal_pci_bus_id(std::string_view text);

// How an item of a device list names GPUs: CUDA ordinals (a number or a range), a UUID (or its start), a
// PCI bus id, or nvidiaN, NVML's (nvidia-smi's) index N, as doctor's line and fleet name a GPU.
enum class DeviceItemKind { ordinals, uuid, pci_bus_id, nvml_index };

// One item of a device list, parsed: its ordinals, or the text to match (a UUID lower-cased, a bus id in
// nvidia-smi's form, an index's digits), and the item as typed, for messages.
struct DeviceItem {
    DeviceItemKind kind = DeviceItemKind::ordinals;
    std::vector<int> ordinals;  // kind ordinals: in the order typed
    std::string text;
    std::string typed;
};

// A device list parsed before the driver is loaded (a usage error, exit 2, whatever the driver), once:
// "all", CUDA ordinals and ranges (0, 0,2, 1-3), UUIDs (GPU-5f0a6b1c-..., or a unique prefix of one, as
// CUDA_VISIBLE_DEVICES takes them) and PCI bus ids (0000:3b:00.0), mixed freely. What it names is
// looked up once the driver is loaded (select).
struct DeviceList {
    std::string spec = "all";       // as typed, for messages
    bool all = true;                // every device
    std::vector<DeviceItem> items;  // what it names, where not all

    // The CUDA ordinals, sorted and without repeats. An ordinal that does not exist, or a UUID, bus id or
    // nvidiaN that no visible device has, is unavailable (exit 3) and the message names the devices there
    // are; a UUID prefix that two devices share is a usage error. nvidiaN (nvidia-smi's index N) needs
    // `nvml`, loaded; without it, it is unavailable too.
    std::vector<int> select(const DriverApi& api, int count, const nvml::Library* nvml = nullptr) const;

    // Whether the list names exactly one device (one ordinal, UUID or bus id; not all, a range or a list).
    bool names_one() const;

    // The CUDA ordinal where the list is one ordinal (nothing to look up); nullopt otherwise.
    std::optional<int> ordinal() const;
};

// Parses a device list without a driver; throws a usage error on anything malformed. The only parse.
DeviceList parse_device_list(std::string_view spec);

// The CUDA ordinals of a device list among `count` devices. UUIDs and bus ids need `api` to look them
// up (without it, a list that holds one is an internal error).
std::vector<int> select_devices(const DeviceList& list, int count, const DriverApi* api = nullptr,
                                const nvml::Library* nvml = nullptr);

}  // namespace cumemctl::gpu
