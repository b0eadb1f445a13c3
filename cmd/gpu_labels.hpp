// The labels of a GPU's series, as dcgm-exporter names the same things, so that cumemctl's series join
// with DCGM's (on UUID, or on Hostname and gpu) and its dashboards' variables work unchanged.
#pragma once

#include <string>

#include "gpu/device/device_selector.hpp"
#include "report/report.hpp"

namespace cumemctl::cmd {

// gpu (NVML's index, nvidia-smi's), UUID, pci_bus_id, device (nvidia<gpu>), modelName and Hostname,
// as dcgm-exporter writes them, and cuda_device (the CUDA ordinal, which dcgm-exporter has not); a
// label whose value is unknown is left out (Prometheus reads an empty label as an absent one).
MetricLabels gpu_labels(const gpu::DeviceIdentity& id, const std::string& host);

// cumemctl_driver_info{driver_version="580.159.04",cuda_version="13.0",command="doctor"} 1, where the driver loaded:
// `driver_version` is the kernel driver's (NVML's, else the kernel module's; left out where unknown), the
// CUDA version the driver library's.
void add_driver_info(Metrics& out, const Report& report, const std::string& driver_version);

}  // namespace cumemctl::cmd
