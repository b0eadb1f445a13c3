#include "gpu_identity.hpp"

#include <fmt/format.h>

#include "report/gpu_name.hpp"

namespace cumemctl::cmd {

std::string identity_note(const gpu::DeviceIdentity& id) {
    // "gpu 3: nvidia0, GPU-..., PCI 00000000:7B:00.0": the CUDA ordinal the table uses, then the GPU as
    // doctor's drain reason and fleet name it (gpu_name: nvidia-smi's index), its UUID and bus id.
    const std::string uuid = id.uuid.empty() ? "UUID unknown" : id.uuid;
    const std::string pci = id.pci_bus_id.empty() ? "unknown" : id.pci_bus_id;
    if (id.nvml_index) {
        return fmt::format("gpu {}: {}, {}, PCI {}", id.ordinal, gpu_name(id.nvml_index, id.pci_bus_id, id.ordinal),
                           uuid, pci);
    }
    return fmt::format("gpu {}: {}, PCI {}, nvidia-smi index unknown", id.ordinal, uuid, pci);
}

NvmlLoad load_nvml_for_identities(const Globals& globals) {
    return std::async(std::launch::async, [&globals] { return open_nvml(globals); }).share();
}

std::vector<gpu::DeviceIdentity> identities_of(Report& report, const Globals& globals, const DriverApi& api,
                                               const NvmlLoad& nvml_load, const std::vector<int>& ordinals) {
    const nvml::Library& nvml = nvml_load.get();
    warn_unloaded_libnvml(report, globals, nvml.info());
    std::vector<gpu::DeviceIdentity> ids;
    for (int ordinal : ordinals) ids.push_back(gpu::device_identity(api, ordinal, &nvml));
    return ids;
}

void add_identity(nlohmann::json& j, const gpu::DeviceIdentity& id) {
    nlohmann::json names = gpu::identity_json(id);
    names.erase("ordinal");
    j.update(names);
}

gpu::DeviceIdentity identity_in(const std::vector<gpu::DeviceIdentity>& ids, int ordinal) {
    for (const auto& id : ids) {
        if (id.ordinal == ordinal) return id;
    }
    gpu::DeviceIdentity unknown;
    unknown.ordinal = ordinal;
    return unknown;
}

void add_identity_notes(Table& table, const std::vector<gpu::DeviceIdentity>& ids) {
    for (const auto& id : ids) table.notes.push_back(identity_note(id));
}

}  // namespace cumemctl::cmd
