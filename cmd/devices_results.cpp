#include "devices_results.hpp"

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <variant>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "command.hpp"

namespace cumemctl::cmd {
using namespace gpu;
namespace {

nlohmann::json device_json(const DeviceInfo& d) {
    const nlohmann::json caps = capabilities_json(d.capabilities);
    nlohmann::json j{{"ordinal", d.ordinal},
                     {"name", d.name},
                     {"uuid", d.uuid},
                     {"pci_bus_id", d.pci_bus_id},
                     {"nvml_index", d.nvml_index ? nlohmann::json(*d.nvml_index) : nlohmann::json(nullptr)},
                     {"compute_capability", fmt::format("{}.{}", d.cc_major, d.cc_minor)},
                     {"total_bytes", d.total_bytes},
                     {"capabilities", caps}};
    j["free_bytes"] = d.free_bytes ? nlohmann::json(*d.free_bytes) : nlohmann::json(nullptr);
    if (!d.free_error.empty()) j["free_error"] = d.free_error;
    j["free_source"] = d.free_source.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.free_source);
    j["nvml"] = d.nvml ? nvml::to_json(*d.nvml) : nlohmann::json(nullptr);
    if (!d.nvml_error.empty()) j["nvml_error"] = d.nvml_error;
    j["fabric"] = d.fabric ? nvml::to_json(*d.fabric) : nlohmann::json(nullptr);
    j["locality"] = locality_json(d.locality);
    return j;
}

// A capability's value as a CSV cell holds it.
CsvValue capability_cell(const Capability& cap) {
    return std::visit(
        [](const auto& value) -> CsvValue {
            if constexpr (std::is_same_v<std::decay_t<decltype(value)>, int>) {
                return std::int64_t{value};
            } else {
                return value;
            }
        },
        capability_value(cap));
}

CsvRow device_row(const DeviceInfo& d) {
    CsvRow row{std::int64_t{d.ordinal},
               d.nvml_index ? CsvValue(std::uint64_t{*d.nvml_index}) : CsvValue(),
               d.uuid,
               d.pci_bus_id,
               d.name,
               fmt::format("{}.{}", d.cc_major, d.cc_minor),
               d.total_bytes,
               d.free_bytes ? CsvValue(*d.free_bytes) : CsvValue(),
               d.free_source.empty() ? CsvValue() : CsvValue(d.free_source)};
    for (const auto& c : capability_catalogue()) {
        const auto cap = std::find_if(d.capabilities.begin(), d.capabilities.end(),
                                      [&](const Capability& have) { return have.key == c.key; });
        row.push_back(cap == d.capabilities.end() ? CsvValue() : capability_cell(*cap));
    }
    return row;
}

}  // namespace

nlohmann::json DevicesResults::to_json() const {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& d : devices) list.push_back(device_json(d));
    return {{"device_count", device_count},
            {"devices", std::move(list)},
            {"nvml", nvml ? nvml_json(*nvml) : nlohmann::json(nullptr)}};
}

std::vector<CsvRow> DevicesResults::csv_rows() const {
    std::vector<CsvRow> rows;
    for (const auto& d : devices) rows.push_back(device_row(d));
    return rows;
}

const std::vector<std::string>& DevicesResults::csv_columns() {
    static const std::vector<std::string> columns = [] {
        std::vector<std::string> names{"ordinal",     "nvml_index", "uuid",
                                       "pci_bus_id",  "name",       "compute_capability",
                                       "total_bytes", "free_bytes", "free_source"};
        for (const auto& c : capability_catalogue()) names.push_back("capabilities." + std::string(c.key));
        return names;
    }();
    return columns;
}

}  // namespace cumemctl::cmd
