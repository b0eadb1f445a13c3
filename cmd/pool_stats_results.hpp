// What `cumemctl pool-stats` found: every pool of this process on each device, and what the selected
// pool did under --release-threshold, --exercise, --make-current and --reset-high.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpu/device/device_selector.hpp"
#include "gpu/device/locality.hpp"
#include "gpu/pool/pool_access.hpp"
#include "gpu/pool/pool_attributes.hpp"
#include "gpu/pool/pool_overview.hpp"
#include "gpu/pool/pool_pattern.hpp"
#include "gpu/pool/pool_workload.hpp"
#include "report/results.hpp"

namespace cumemctl::cmd {

// What --make-current showed: whether the driver then returns the pool as its location's current one,
// and for device memory where a plain cuMemAllocAsync drew from.
struct MadeCurrent {
    bool now_current = false;
    std::optional<gpu::CurrentPoolDraw> draw;  // none at a location cuMemAllocAsync does not draw from
};

// The pool acted on: as it was at the start, what was done to it, and as it was at the end.
struct SelectedPool {
    gpu::PoolInfo pool;
    gpu::PoolChoice choice = gpu::PoolChoice::default_pool;  // --pool
    gpu::PoolAttributes at_start;
    std::optional<gpu::Placement> placement;      // a pool at a locality domain: where the driver says it is
    std::optional<gpu::WorkloadPattern> pattern;  // --exercise
    std::optional<gpu::WorkloadResult> exercise;  // what the workload did
    std::optional<MadeCurrent> made_current;      // --make-current
    gpu::PoolAttributes at_end;
    bool high_water_marks_reset = false;  // --reset-high
};

// One device: its pools at every location, and the selected pool where one was acted on (none also
// where acting on it failed).
struct DevicePools {
    gpu::DeviceIdentity id;
    std::string name;
    std::vector<gpu::LocationPools> pools;
    std::optional<SelectedPool> selected;
};

class PoolStatsResults final : public Results {
public:
    std::vector<DevicePools> devices;  // in order (a failure ends the list)
    int device_count = 0;              // the devices the driver sees

    // {"statistics_scope": "process", "statistics_note", "devices": [each device's pools and "selected"]}
    nlohmann::json to_json() const override;
    // Each GPU's pools, the selected pool and its workload (pool_stats_views.cpp).
    std::vector<Table> tables(const Report& report) const override;
    // The same as gauges, each GPU labelled as dcgm-exporter labels it.
    std::vector<Metric> metrics(const Report& report) const override;
};

}  // namespace cumemctl::cmd
