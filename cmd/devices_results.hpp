// What `cumemctl devices` found: each selected device's memory system, and NVML's identity; its JSON and
// its rows for --format csv (a GPU per row).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpu/device/devices.hpp"
#include "nvml/nvml.hpp"
#include "report/csv_renderer.hpp"
#include "report/results.hpp"

namespace cumemctl::cmd {

class DevicesResults final : public Results, public CsvRows {
public:
    int device_count = 0;                   // the devices the driver sees
    std::vector<gpu::DeviceInfo> devices;   // the selected ones, in order
    std::optional<nvml::LibraryInfo> nvml;  // NVML as loaded; none where it was not (--no-free)

    // {"device_count", "devices": [each device], "nvml"}
    nlohmann::json to_json() const override;
    // A row per device, its values in the order of csv_columns.
    std::vector<CsvRow> csv_rows() const override;
    // The columns of the rows as --json names them: the identity, memory and each capability
    // ("capabilities.vmm").
    static const std::vector<std::string>& csv_columns();
    // "Devices" (a row per GPU) and "Properties" (devices_table.cpp).
    std::vector<Table> tables(const Report& report) const override;
    // Each GPU's gauges and the driver's (devices_metrics.cpp).
    std::vector<Metric> metrics(const Report& report) const override;
};

}  // namespace cumemctl::cmd
