// le-bind's results: what was asked, how far the round trip got (the driver's support, the limits, the
// endpoint, the bindings and every step), and the GPUs of the request as operators name them.
#pragma once

#include <vector>

#include "gpu/device/device_selector.hpp"
#include "gpu/le/logical_endpoint_bind.hpp"
#include "report/results.hpp"

namespace cumemctl::cmd {

struct LeBindResults final : Results {
    gpu::LeBindRequest request;
    gpu::LeBindOutcome outcome;
    std::vector<gpu::DeviceIdentity> gpus;  // the request's devices (as doctor's results.gpus)

    nlohmann::json to_json() const override;
    // The endpoint as made, and its steps (le_bind_results.cpp).
    std::vector<Table> tables(const Report& report) const override;
};

}  // namespace cumemctl::cmd
