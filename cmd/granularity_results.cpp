#include "granularity_results.hpp"

#include <nlohmann/json.hpp>

#include "gpu/device/devices.hpp"
#include "gpu_identity.hpp"
#include "report/report.hpp"

namespace cumemctl::cmd {
using namespace gpu;
namespace {

nlohmann::json row_json(const GranularityAnswer& answer, const std::vector<DeviceIdentity>& ids) {
    const GranularityRow& row = answer.row;
    nlohmann::json j{{"device", row.device}};
    add_identity(j, identity_in(ids, row.device));
    j.update({{"location", granularity_location_text(row)},
              {"handle_type", handle_type_name(row.request.handle_type)},
              {"flags", flag_names(row.request)},
              {"status", granularity_status_name(row.status)}});
    if (row.status == GranularityRow::Status::ok) {
        j["minimum_bytes"] = row.granularity.minimum;
        j["recommended_bytes"] = row.granularity.recommended;
        if (answer.rounded) {
            j["size_rounded_to_minimum_bytes"] = answer.rounded->to_minimum;
            j["size_rounded_to_recommended_bytes"] = answer.rounded->to_recommended;
        }
    } else {
        j["minimum_bytes"] = nullptr;
        j["recommended_bytes"] = nullptr;
        j["problem"] = cumemctl::to_json(*row.problem);
    }
    return j;
}

}  // namespace

std::string granularity_location_text(const GranularityRow& row) {
    return row.location ? location_name(*row.location) : location_spec_name(row.request.location);
}

nlohmann::json GranularityResults::to_json() const {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& answer : rows) list.push_back(row_json(answer, ids));
    nlohmann::json j{{"device_count", device_count}, {"rows", std::move(list)}};
    if (size) j["size_bytes"] = *size;
    return j;
}

}  // namespace cumemctl::cmd
