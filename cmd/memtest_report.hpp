// memtest's report: each device's JSON. memtest_report.cpp draws MemtestResults' views beside it: each
// device's tables (coverage, patterns with GB/s, NVML before and after, verdict; the mismatches) and its
// cumemctl_memtest_* gauges labelled with the UUID.
#pragma once

#include <nlohmann/json.hpp>

#include "gpu/device/device_selector.hpp"
#include "gpu/memtest/memtest.hpp"
#include "report/report.hpp"

namespace cumemctl::cmd {

nlohmann::json memtest_device_json(const gpu::memtest::DeviceMemtest& d, std::uint64_t leave, unsigned max_records);

}  // namespace cumemctl::cmd
