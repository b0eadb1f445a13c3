// The multi-node NVLink fabric of `devices`: its table rows and its Prometheus gauges (the JSON is
// nvml::to_json of the fabric info).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "gpu/device/devices.hpp"
#include "report/report.hpp"

namespace cumemctl::cmd {

// The fabric rows of the devices table (label, then one cell per device): whether attached, state and
// status, cluster UUID, clique, health summary and each health field; none where NVML gave no device
// fabric info.
std::vector<std::vector<std::string>> fabric_rows(const std::vector<gpu::DeviceInfo>& devices);

// A device's fabric gauges: attached, state, health summary and fields; and, where it is attached, its
// NVLink domain as labels (cluster_uuid and clique_id together: clique 32766 recurs on every rack);
// `labels`: the GPU's (gpu_labels).
void add_fabric_metrics(Metrics& out, const gpu::DeviceInfo& device, const MetricLabels& labels);

}  // namespace cumemctl::cmd
