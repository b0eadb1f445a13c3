#include "memtest_results.hpp"

#include <nlohmann/json.hpp>

#include "command.hpp"
#include "memtest_report.hpp"

namespace cumemctl::cmd {

nlohmann::json MemtestResults::to_json() const {
    std::vector<std::string> pattern_names;
    for (const gpu::memtest::Pattern p : patterns) pattern_names.push_back(gpu::memtest::pattern_name(p));
    nlohmann::json devices_json = nlohmann::json::array();
    for (const MemtestDevice& d : devices) {
        nlohmann::json j = memtest_device_json(d.run, leave, max_mismatches);
        const nlohmann::json names = gpu::identity_json(d.id);  // its uuid is already there, as memtest read it
        j["pci_bus_id"] = names["pci_bus_id"];
        j["nvml_index"] = names["nvml_index"];
        devices_json.push_back(std::move(j));
    }
    return {{"memtest",
             {{"seed", seed},
              {"patterns", pattern_names},
              {"passes", passes},
              {"time_budget_seconds", time_budget ? nlohmann::json(*time_budget) : nullptr},
              {"leave_bytes", leave},
              {"forced", forced},
              {"record", record ? nlohmann::json(*record) : nullptr}}},
            {"nvml", nvml_json(nvml)},
            {"devices", std::move(devices_json)}};
}

}  // namespace cumemctl::cmd
