// The physical limit of each path memory moves on, computed from what the GPU reports rather than a
// table of products: the PCIe link (rate x lanes x encoding), the C2C link of Grace (NVML's maximum),
// and HBM (bus width x memory clock x 2, double data rate). Figures are GB/s (1e9 bytes a second).
#pragma once

#include <optional>
#include <string>

#include "cuda/driver_api.hpp"
#include "gpu/bandwidth/copy_bandwidth.hpp"
#include "nvml/link_info.hpp"
#include "nvml/nvlink.hpp"

namespace cumemctl::gpu {

// One direction of a PCIe link of `generation` (1 to 6) and `width` lanes, in GB/s: the transfer rate
// (2.5, 5, 8, 16, 32, 64 GT/s) x lanes x the encoding (8b/10b to Gen2, 128b/130b Gen3-5, FLIT 242/256
// Gen6) / 8. Gen5 x16: 63.0. nullopt for a generation outside 1 to 6 or no lanes.
std::optional<double> pcie_gbps(unsigned generation, unsigned width);

// HBM's limit in GB/s, reads plus writes: bus width / 8 x clock x 2. The H200: 6016 bits at 3201 MHz,
// 4814 GB/s. nullopt where either is 0.
std::optional<double> hbm_gbps(unsigned bus_width_bits, unsigned max_clock_mhz);

// What a limit is and where it came from.
struct PathLimit {
    enum class Link { pcie, c2c, hbm, nvlink };
    Link link = Link::pcie;
    double gbps = 0;
    std::string basis;  // "PCIe Gen5 x16 (the link's maximum)", "C2C, 10 links", "HBM 6016-bit at 3201 MHz"
};

// The host<->device limit, per direction: the C2C link's where NVML names active ones, else the PCIe
// link's maximum generation and width (the link's, which a platform may give narrower than the GPU
// can do: `basis` says which). nullopt with `why` where NVML gives neither.
std::optional<PathLimit> host_link_limit(const nvml::LinkInfo& info, std::string* why);

// HBM's limit from NVML's bus width and maximum memory clock, else the driver's attributes
// (`attr_bus_width_bits`, `attr_clock_khz`: 0 where unknown). nullopt with `why` where neither says.
std::optional<PathLimit> memory_limit(const nvml::LinkInfo& info, int attr_bus_width_bits, int attr_clock_khz,
                                      std::string* why);

// The GPU->GPU limit, per direction: the NVLink links up x their speed, from NVML ("NVLink, 18 of 18
// links up at 26.6 GB/s"). nullopt with `why` where the GPU has no NVLink or none is up.
std::optional<PathLimit> nvlink_limit(const std::optional<nvml::NvLink>& nvlink, std::string* why);

// What NVML says of one GPU's links and the limits of its paths, with why a limit is unknown.
struct DeviceLimits {
    nvml::LinkInfo link;
    std::optional<nvml::NvLink> nvlink;  // absent where NVML gives no NVLink (nvlink_why says why)
    std::string nvml_error;              // why NVML said nothing of this GPU (not loaded, not listed)
    std::optional<PathLimit> host, memory, peer;
    std::string host_why, memory_why, peer_why;
};

// The limits of GPU `ordinal` (NVML's device of `uuid` where `nvml` is loaded and lists it; the
// driver's attributes for HBM otherwise). Never throws.
DeviceLimits device_limits(const DriverApi& api, int ordinal, const nvml::Library* nvml, const std::string& uuid);

// The limit a figure is held against: the host link per direction (both directions at once: twice it),
// HBM for device->device, the source GPU's NVLink links up for GPU->GPU.
std::optional<double> limit_of(const DeviceLimits& limits, const CopyFigure& figure);

// "Gen5 x16".
std::string pcie_text(std::optional<unsigned> generation, std::optional<unsigned> width);

}  // namespace cumemctl::gpu
