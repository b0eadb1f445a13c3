// fleet's node properties, each with its key in the JSON (results.nodes[].properties,
// results.differences[].property: snake_case, so that jq .properties.kernel_module reaches it) and its
// name in the tables and the HTML page ("kernel module"). One table, read by the fleet summary
// (src/fleet/) and by fleet's HTML page here, so that the key and the name never part.
#pragma once

#include <string>
#include <string_view>

namespace cumemctl {

struct FleetProperty {
    std::string_view key;   // in the JSON
    std::string_view name;  // in the tables
};

// The node-wide properties.
inline constexpr FleetProperty kFleetDriver{"driver", "driver"};
inline constexpr FleetProperty kFleetTool{"cumemctl", "cumemctl"};
inline constexpr FleetProperty kFleetGpus{"gpus", "gpus"};
inline constexpr FleetProperty kFleetKernelModule{"kernel_module", "kernel module"};
inline constexpr FleetProperty kFleetGpuModel{"gpu_model", "gpu model"};
inline constexpr FleetProperty kFleetProperties[] = {kFleetDriver, kFleetTool, kFleetGpus, kFleetKernelModule,
                                                     kFleetGpuModel};

// A memory capability of the GPUs is a property too: the prefix and its catalogue key
// ("capability_fabric", named "capability fabric").
inline constexpr FleetProperty kFleetCapability{"capability_", "capability "};

inline std::string fleet_capability_key(std::string_view capability) {
    return std::string(kFleetCapability.key) + std::string(capability);
}

inline bool is_fleet_capability(std::string_view key) {
    return key.starts_with(kFleetCapability.key);
}

// The tables' name of a property's key; the key itself where it is none of the above.
inline std::string fleet_property_name(std::string_view key) {
    for (const auto& p : kFleetProperties) {
        if (p.key == key) return std::string(p.name);
    }
    if (is_fleet_capability(key)) {
        return std::string(kFleetCapability.name) + std::string(key.substr(kFleetCapability.key.size()));
    }
    return std::string(key);
}

}  // namespace cumemctl
