// What `cumemctl create` found: the request and what was made of it on the device, step by step (also
// after a failure: the steps up to it).
#pragma once

#include <utility>

#include "gpu/device/device_selector.hpp"
#include "gpu/vmm/vmm_create.hpp"
#include "report/results.hpp"

namespace cumemctl::cmd {

class CreateResults final : public Results {
public:
    gpu::CreateRequest request;
    gpu::CreateResult result;
    gpu::DeviceIdentity id;  // the device's names beside its ordinal

    CreateResults(gpu::CreateRequest q, gpu::CreateResult r, gpu::DeviceIdentity device)
        : request(std::move(q)), result(std::move(r)), id(std::move(device)) {}
    // {"device" and its names, the sizes, the properties asked for and granted, every check's result,
    // "steps" and "resources"}
    nlohmann::json to_json() const override;
    // The allocation, its steps and the import check's (create_report.cpp).
    std::vector<Table> tables(const Report& report) const override;
};

}  // namespace cumemctl::cmd
