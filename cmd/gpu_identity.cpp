#include "gpu_identity.hpp"

#include <fmt/format.h>

namespace cumemctl::cmd {

std::string identity_note(const gpu::DeviceIdentity& id) {
    return fmt::format("gpu {}: {}, PCI {}, nvidia-smi index {}", id.ordinal,
                       id.uuid.empty() ? "UUID unknown" : id.uuid, id.pci_bus_id.empty() ? "unknown" : id.pci_bus_id,
                       id.nvml_index ? std::to_string(*id.nvml_index) : "unknown");
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
