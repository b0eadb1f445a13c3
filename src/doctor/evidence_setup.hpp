// The evidence of the setup, inventory and per-device checks: driver, devices, inventory, capabilities,
// context, logical-endpoints, xid, and a check cut short by its time budget (evidence.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "doctor/evidence_fields.hpp"
#include "gpu/device/devices.hpp"

namespace cumemctl::doctor {

// A check that had no NVML to ask (host-bandwidth, pcie-link, memory-health, fabric): why.
struct NvmlUnavailable {
    std::string nvml_error;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("nvml_error", s.nvml_error);
    }
};

// driver: the library, the CUDA version it says and the kernel module's (null where none is read).
struct DriverEvidence {
    std::string library;
    Maybe<int> cuda_version;
    Maybe<std::string> version_string;
    Maybe<std::optional<std::string>> kernel_module;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("library", s.library);
        v("cuda_version", s.cuda_version);
        v("version_string", s.version_string);
        v("kernel_module", s.kernel_module, kReadByFleet);
    }
};

// devices: how many the driver sees, their names, and CUDA_VISIBLE_DEVICES where it is set.
struct DevicesEvidence {
    int count = 0;
    Maybe<std::string> cuda_visible_devices;
    Maybe<std::vector<std::string>> names;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("count", s.count);
        v("cuda_visible_devices", s.cuda_visible_devices);
        v("names", s.names, kReadByFleet);
    }
};

// A GPU as one source lists it (inventory): its bus id and UUID, null where the source does not say.
struct SeenGpu {
    std::optional<std::string> pci_bus_id, uuid;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("pci_bus_id", s.pci_bus_id);
        v("uuid", s.uuid);
    }
};

// inventory: the GPUs CUDA, NVML and the kernel list (null: a source not asked), those missing from
// CUDA's view, the driver version, and CUDA_VISIBLE_DEVICES where it is set.
struct InventoryEvidence {
    std::vector<SeenGpu> cuda;
    std::optional<std::vector<SeenGpu>> nvml, kernel;
    std::vector<SeenGpu> missing;
    std::optional<std::string> driver_version;
    Maybe<std::string> cuda_visible_devices;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("cuda", s.cuda);
        v("nvml", s.nvml);
        v("kernel", s.kernel);
        v("missing", s.missing);
        v("driver_version", s.driver_version);
        v("cuda_visible_devices", s.cuda_visible_devices);
    }
};

// capabilities: the device's identity and what it supports, as the driver answers (the capabilities
// written as gpu/device writes them, capabilities_json); NFD's labels read `device`.
struct CapabilitiesEvidence {
    gpu::DeviceInfo device;
    std::string compute_capability;  // "9.0"
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("name", s.device.name);
        v("uuid", s.device.uuid, kReadByFleet);
        v("pci_bus_id", s.device.pci_bus_id);
        v("compute_capability", s.compute_capability);
        v("total_bytes", s.device.total_bytes);
        v("capabilities", s.device.capabilities, kReadByFleet);
    }
};

// context: how long the context took, and the device's free and total memory where the driver says.
struct ContextEvidence {
    double context_seconds = 0;
    Maybe<std::size_t> free_bytes, total_bytes;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("context_seconds", s.context_seconds);
        v("free_bytes", s.free_bytes);
        v("total_bytes", s.total_bytes);
    }
};

// logical-endpoints: what the device answers (null: unknown), and the entry points the driver lacks.
struct EndpointsEvidence {
    std::optional<bool> unicast, multicast;
    Maybe<std::vector<std::string>> missing_entry_points;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("unicast", s.unicast);
        v("multicast", s.multicast);
        v("missing_entry_points", s.missing_entry_points);
    }
};

// One kind of Xid on one GPU, as the kernel's log gives it.
struct XidEntry {
    std::string gpu;
    std::optional<int> device;
    int xid = 0, count = 0;
    std::optional<std::string> kind, meaning;
    std::string judged_by;  // "xid", "memory-health" (which judges it), "none" (no meaning known)
    std::optional<double> last_seconds_after_boot;
    std::string last_time;
    std::optional<std::string> last_text;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("gpu", s.gpu);
        v("device", s.device);
        v("xid", s.xid);
        v("count", s.count);
        v("kind", s.kind);
        v("meaning", s.meaning);
        v("judged_by", s.judged_by);
        v("last_seconds_after_boot", s.last_seconds_after_boot);
        v("last_time", s.last_time);
        v("last_text", s.last_text);
    }
};

// xid: the kernel log read, how many records, whether from boot, and the Xids found, worst first.
struct XidEvidence {
    std::string log;
    Maybe<std::size_t> records;
    Maybe<bool> from_boot;
    Maybe<std::vector<XidEntry>> xids;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("log", s.log);
        v("records", s.records);
        v("from_boot", s.from_boot);
        v("xids", s.xids);
    }
};

// A check cut short by its time budget (budget.cpp): the budget, and the driver call it waited on.
struct TimeoutEvidence {
    double budget_seconds = 0;
    std::optional<std::string> pending_call;
    Maybe<double> pending_seconds;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("budget_seconds", s.budget_seconds);
        v("pending_call", s.pending_call);
        v("pending_seconds", s.pending_seconds);
    }
};

}  // namespace cumemctl::doctor
