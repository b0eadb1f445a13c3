// What NVML says of a GPU's NVLink links: how many it has, how many are up, and their speed, from
// which the GPU-to-GPU limit is computed (links up x per-link speed), the way the PCIe limit is from
// the link's generation and width.
#pragma once

#include <optional>
#include <string>

#include "nvml/nvml.hpp"

namespace cumemctl::nvml {

// A GPU's NVLink links. Speeds are MB/s (1e6 bytes a second) per direction, as NVML gives them.
struct NvLink {
    unsigned links = 0;                  // present (NVML_FI_DEV_NVLINK_LINK_COUNT)
    unsigned active = 0;                 // up
    unsigned unknown = 0;                // whose state NVML did not give
    unsigned long long active_mbps = 0;  // the active links' speeds, summed
};

// Asks NVML through the field values (link count, then each link's state and speed), else
// nvmlDeviceGetNvLinkState per link and the common speed. nullopt with `why` where the GPU has no
// NVLink or NVML cannot say; never throws.
std::optional<NvLink> query_nvlink(const Library& nvml, Device device, std::string& why);

}  // namespace cumemctl::nvml
