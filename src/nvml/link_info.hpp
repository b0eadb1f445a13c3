// What NVML says of a GPU's paths to memory: its PCIe link (generation and width, now and at most, and
// the replay counter), its C2C link on Grace, and its memory bus (width and maximum clock). Every
// figure is optional: absent where NVML did not answer, with NVML's words in `unavailable`.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nvml/nvml.hpp"

namespace cumemctl::nvml {

// A PCIe link as NVML reports it. `max_*` are the link's maxima (the GPU and its slot together);
// `gpu_max_generation` the GPU's own. The current generation drops while the link idles.
struct PcieLink {
    std::optional<unsigned> generation, width;          // now
    std::optional<unsigned> max_generation, max_width;  // the link's maximum
    std::optional<unsigned> gpu_max_generation;         // the GPU's own maximum
    std::optional<unsigned> replay_counter;             // replays since the driver loaded
};

// A Grace Hopper or Grace Blackwell GPU's chip-to-chip link: its active links and their maximum, in MB/s.
struct C2cLink {
    unsigned links = 0;               // present
    unsigned active_links = 0;        // active
    unsigned unknown_links = 0;       // whose state NVML did not give
    unsigned long long max_mbps = 0;  // the active links' maxima, summed (per direction)
};

// The memory bus: its width in bits and the memory clock's maximum in MHz.
struct MemoryBus {
    std::optional<unsigned> width_bits;
    std::optional<unsigned> max_clock_mhz;
};

// What NVML answered, and why not where it did not: field name -> NVML's words.
struct LinkInfo {
    PcieLink pcie;
    std::optional<C2cLink> c2c;  // absent where the GPU has no C2C link or NVML cannot say
    MemoryBus memory;
    std::vector<std::pair<std::string, std::string>> unavailable;
};

// Asks NVML for everything above; never throws.
LinkInfo query_link_info(const Library& nvml, Device device);

// The link's current generation and width and the replay counter only: what a check reads again while
// a copy runs. Never throws.
PcieLink query_pcie_now(const Library& nvml, Device device);

}  // namespace cumemctl::nvml
