// What `cumemctl granularity` found: a row per device x location x handle type x flag set, with the
// driver's granularity or why there is none, and --size rounded up to each.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpu/device/device_selector.hpp"
#include "gpu/device/granularity.hpp"
#include "report/results.hpp"

namespace cumemctl::cmd {

// --size rounded up to a row's minimum and recommended granularity.
struct RoundedSize {
    std::uint64_t to_minimum = 0;
    std::uint64_t to_recommended = 0;
};

// One row, with --size rounded up where it has an answer and --size was given.
struct GranularityAnswer {
    gpu::GranularityRow row;
    std::optional<RoundedSize> rounded;
};

class GranularityResults final : public Results {
public:
    int device_count = 0;                  // the devices the driver sees
    std::vector<GranularityAnswer> rows;   // in the order queried
    std::optional<std::uint64_t> size;     // --size
    std::vector<gpu::DeviceIdentity> ids;  // the names of the rows' devices
    bool each_flag_alone = false;          // the flag sets are none and each flag alone (no flag was given)

    // {"device_count", "rows": [each row with its device's names], "size_bytes" where --size was given}
    nlohmann::json to_json() const override;
    // The rows, their reasons and the devices' names (granularity_results.cpp).
    std::vector<Table> tables(const Report& report) const override;
};

}  // namespace cumemctl::cmd
