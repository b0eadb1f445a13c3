// memtest's results: how it was asked to run (seed, patterns, passes, budget, margin), NVML's library,
// and each GPU's run with the GPU as operators name it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpu/device/device_selector.hpp"
#include "gpu/memtest/memtest.hpp"
#include "nvml/nvml.hpp"
#include "report/results.hpp"

namespace cumemctl::cmd {

// One GPU's memtest and the GPU's names (its UUID as memtest read it is in the run).
struct MemtestDevice {
    gpu::memtest::DeviceMemtest run;
    gpu::DeviceIdentity id;
};

struct MemtestResults final : Results {
    std::uint64_t seed = 0;  // the random pattern's
    std::vector<gpu::memtest::Pattern> patterns;
    unsigned passes = 1;
    std::optional<double> time_budget;  // seconds
    std::uint64_t leave = 0;            // bytes left free for the context and the driver
    bool forced = false;                // --force: run beside other processes
    std::optional<std::string> record;  // the state file the run is kept in (--record)
    unsigned max_mismatches = 32;       // mismatching words listed per pattern pass
    nvml::LibraryInfo nvml;
    std::vector<MemtestDevice> devices;

    nlohmann::json to_json() const override;
    // Each GPU's run and its mismatches (memtest_report.cpp).
    std::vector<Table> tables(const Report& report) const override;
    // Each GPU's cumemctl_memtest_* gauges, labelled as dcgm-exporter labels the GPU.
    std::vector<Metric> metrics(const Report& report) const override;
};

}  // namespace cumemctl::cmd
