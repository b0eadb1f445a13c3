// bandwidth's results: the copy size and count, and each GPU measured with its link, its limits and its
// figures; a CSV row per figure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/interrupt.hpp"
#include "gpu/bandwidth/copy_bandwidth.hpp"
#include "gpu/bandwidth/limits.hpp"
#include "gpu/device/device_selector.hpp"
#include "report/csv_renderer.hpp"
#include "report/results.hpp"

namespace cumemctl::cmd {

// One GPU measured.
struct DeviceFigures {
    gpu::DeviceIdentity id;
    gpu::DeviceLimits limits;
    std::vector<gpu::CopyFigure> figures;
    std::vector<gpu::NumaRefusal> numa_refused;  // nodes whose host memory the driver refused
    bool numa_unsupported = false;               // NUMA nodes were asked for, and the GPU cannot map host-NUMA memory
    gpu::HostPlacement placement;                // the GPU's node and CPUs, where its buffers belong
    gpu::BindingOutcome binding;                 // how the copies' thread was bound to them
};

// The memory a figure copies from or to: "pinned", "pageable", "numa:1", "device", "GPU 3".
std::string memory_name(const gpu::CopyFigure& f);

// --concurrent: one direction's figures of every GPU at once, summed (nvbandwidth's host_to_all and
// all_to_host sum theirs the same way).
struct ConcurrentSum {
    gpu::CopyPath path = gpu::CopyPath::host_to_device;
    std::vector<int> devices;
    double gbps = 0;  // the GPUs' figures, each bytes copied over its own time, summed
};

struct BandwidthResults final : Results, CsvRows {
    std::uint64_t size = 0;  // the bytes of each copy
    int iterations = 0;      // timed copies of each path, after one untimed
    std::vector<DeviceFigures> devices;
    std::vector<ConcurrentSum> sums;              // --concurrent: h2d and d2h; empty without it
    int device_count = 0;                         // the devices the driver sees
    std::vector<gpu::DeviceIdentity> identities;  // the selected GPUs, named below the tables
    // Where SIGINT or SIGTERM stopped the run: the signal, the GPU measured and what of it.
    struct Stop {
        Interrupted signal;
        int device = -1;
        std::string doing;
    };
    std::optional<Stop> stopped;

    nlohmann::json to_json() const override;
    // A row per figure, in the order of csv_columns.
    std::vector<CsvRow> csv_rows() const override;
    // The --json names of a figure's columns.
    static const std::vector<std::string>& csv_columns();
    // Each path's figure against its limit, --concurrent's figures, the GPUs' names (bandwidth_views.cpp).
    std::vector<Table> tables(const Report& report) const override;
    // Each figure, its limit and ratio, and --concurrent's sums.
    std::vector<Metric> metrics(const Report& report) const override;
};

}  // namespace cumemctl::cmd
