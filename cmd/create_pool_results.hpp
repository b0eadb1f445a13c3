// What `cumemctl create --pool` found: on each device, the pool, its block, its attributes and (with
// --ipc-check) every step of the check across two processes.
#pragma once

#include <vector>

#include "gpu/device/device_selector.hpp"
#include "gpu/pool/pool_create.hpp"
#include "report/results.hpp"

namespace cumemctl::cmd {

// One device's pool.
struct DevicePoolCreate {
    gpu::DeviceIdentity id;
    gpu::CreatePoolResult result;
};

class CreatePoolResults final : public Results {
public:
    std::vector<DevicePoolCreate> devices;  // in order (a failure that is thrown ends the list)

    // {"statistics_scope": "process", "devices": [each pool, its block, steps and resources]}
    nlohmann::json to_json() const override;
    // Each pool and its steps, the GPU named below.
    std::vector<Table> tables(const Report& report) const override;
};

}  // namespace cumemctl::cmd
