// The devices table: a row per GPU with the columns of a list (its names and memory; another column is
// one more entry), then the properties, one column per group of GPUs alike, so that eight GPUs fit 100
// columns as one does.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "gpu/device/devices.hpp"
#include "report/report.hpp"

namespace cumemctl::cmd {

// One column of the row of a GPU: its heading and its cell.
struct DeviceColumn {
    std::string header;
    std::function<std::string(const gpu::DeviceInfo&)> cell;
};

// The columns of the GPUs' rows, in order: gpu (CUDA ordinal), UUID, PCI bus id, index (nvidia-smi's),
// memory, free.
const std::vector<DeviceColumn>& device_columns();

}  // namespace cumemctl::cmd
