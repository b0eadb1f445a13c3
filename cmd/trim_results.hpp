// What `cumemctl trim` found: on each device, the pool, the workload that filled it and the trim's
// figures and verdict.
#pragma once

#include <vector>

#include "gpu/device/device_selector.hpp"
#include "gpu/pool/pool_access.hpp"
#include "gpu/pool/pool_pattern.hpp"
#include "gpu/pool/pool_trim.hpp"
#include "report/results.hpp"

namespace cumemctl::cmd {

// One device's trim.
struct DeviceTrim {
    gpu::DeviceIdentity id;
    gpu::PoolInfo pool;
    gpu::WorkloadPattern workload;  // the workload run (the default one may be fitted to free memory)
    gpu::TrimResult result;
};

class TrimResults final : public Results {
public:
    std::vector<DeviceTrim> devices;  // those trimmed, in order (a failure ends the list)

    // {"statistics_scope": "process", "devices": [the figures, pool, exercise and verdict of each]}
    nlohmann::json to_json() const override;
    // Each device's pool before and after the trim, the GPU named below.
    std::vector<Table> tables(const Report& report) const override;
};

}  // namespace cumemctl::cmd
