#include "gpu_labels.hpp"

#include <fmt/format.h>

#include "cuda/driver_info.hpp"

namespace cumemctl::cmd {

MetricLabels gpu_labels(const gpu::DeviceIdentity& id, const std::string& host) {
    MetricLabels labels;
    auto add = [&](const char* key, const std::string& value) {
        if (!value.empty()) labels.emplace_back(key, value);
    };
    add("gpu", id.nvml_index ? std::to_string(*id.nvml_index) : std::string());
    add("UUID", id.uuid);
    add("pci_bus_id", id.pci_bus_id);
    // dcgm-exporter writes device="nvidia<gpu>", its gpu being NVML's index (not the minor number).
    add("device", id.nvml_index ? "nvidia" + std::to_string(*id.nvml_index) : std::string());
    add("modelName", id.name);
    add("Hostname", host);
    add("cuda_device", std::to_string(id.ordinal));
    return labels;
}

void add_driver_info(Metrics& out, const Report& report, const std::string& driver_version) {
    if (!report.driver.loaded) return;
    MetricLabels labels;
    if (!driver_version.empty()) labels.emplace_back("driver_version", driver_version);
    labels.emplace_back("cuda_version", cuda_version_string(report.driver.version));
    labels.emplace_back("command", report.command);  // doctor's and devices' files are told apart
    out.add("driver_info", "the NVIDIA driver: its version and the CUDA version it gives (always 1)", std::move(labels),
            1);
}

}  // namespace cumemctl::cmd
