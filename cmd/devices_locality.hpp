// The locality domains of `devices` (CUDA 13.4): table rows and Prometheus gauges (the JSON is
// gpu::locality_json). Below a 13.4 driver every figure reads "unknown (driver 13.0; needs 13.4)".
#pragma once

#include <string>
#include <vector>

#include "gpu/device/devices.hpp"
#include "gpu_labels.hpp"
#include "report/report.hpp"

namespace cumemctl::cmd {

// The locality rows of the devices table (label, then one cell per device): domains, SMs per domain and
// left over, RDMA with localized memory, and whether a small localized allocation worked.
std::vector<std::vector<std::string>> locality_rows(const std::vector<gpu::DeviceInfo>& devices);

// A device's locality gauges, only for what the driver answered.
void add_locality_metrics(Metrics& out, const gpu::DeviceInfo& device, const MetricLabels& labels);

}  // namespace cumemctl::cmd
