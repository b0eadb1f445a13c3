#include "gpu/bandwidth/limits.hpp"

#include <fmt/format.h>

#include "gpu/device/devices.hpp"

namespace cumemctl::gpu {

std::optional<double> pcie_gbps(unsigned generation, unsigned width) {
    constexpr double kRate[] = {0, 2.5, 5, 8, 16, 32, 64};  // GT/s per lane
    if (generation < 1 || generation > 6 || width == 0) return std::nullopt;
    const double encoding = generation <= 2 ? 8.0 / 10 : generation <= 5 ? 128.0 / 130 : 242.0 / 256;
    return kRate[generation] * width * encoding / 8;
}

std::optional<double> hbm_gbps(unsigned bus_width_bits, unsigned max_clock_mhz) {
    if (bus_width_bits == 0 || max_clock_mhz == 0) return std::nullopt;
    return bus_width_bits / 8.0 * max_clock_mhz * 1e6 * 2 / 1e9;
}

std::string pcie_text(std::optional<unsigned> generation, std::optional<unsigned> width) {
    return fmt::format("Gen{} x{}", generation ? std::to_string(*generation) : "?",
                       width ? std::to_string(*width) : "?");
}

std::optional<PathLimit> host_link_limit(const nvml::LinkInfo& info, std::string* why) {
    if (info.c2c && info.c2c->active_links > 0 && info.c2c->max_mbps > 0) {
        return PathLimit{
            PathLimit::Link::c2c, static_cast<double>(info.c2c->max_mbps) / 1000,
            fmt::format("C2C, {} active link{}", info.c2c->active_links, info.c2c->active_links == 1 ? "" : "s")};
    }
    const nvml::PcieLink& p = info.pcie;
    if (!p.max_generation || !p.max_width) {
        if (why != nullptr) *why = "NVML gives neither a C2C link nor the PCIe link's maximum";
        return std::nullopt;
    }
    const auto gbps = pcie_gbps(*p.max_generation, *p.max_width);
    if (!gbps) {
        if (why != nullptr)
            *why = fmt::format("NVML's PCIe maximum, {}, is no link", pcie_text(p.max_generation, p.max_width));
        return std::nullopt;
    }
    std::string basis = fmt::format("PCIe {} (the link's maximum", pcie_text(p.max_generation, p.max_width));
    if (p.gpu_max_generation && *p.gpu_max_generation > *p.max_generation)
        basis += fmt::format("; the GPU itself can do Gen{}", *p.gpu_max_generation);
    return PathLimit{PathLimit::Link::pcie, *gbps, basis + ")"};
}

std::optional<PathLimit> memory_limit(const nvml::LinkInfo& info, int attr_bus_width_bits, int attr_clock_khz,
                                      std::string* why) {
    if (info.memory.width_bits && info.memory.max_clock_mhz) {
        if (const auto g = hbm_gbps(*info.memory.width_bits, *info.memory.max_clock_mhz)) {
            return PathLimit{
                PathLimit::Link::hbm, *g,
                fmt::format("{}-bit bus at {} MHz (NVML)", *info.memory.width_bits, *info.memory.max_clock_mhz)};
        }
    }
    if (attr_bus_width_bits > 0 && attr_clock_khz > 0) {
        const unsigned mhz = static_cast<unsigned>(attr_clock_khz / 1000);
        if (const auto g = hbm_gbps(static_cast<unsigned>(attr_bus_width_bits), mhz)) {
            return PathLimit{PathLimit::Link::hbm, *g,
                             fmt::format("{}-bit bus at {} MHz (the driver's attributes)", attr_bus_width_bits, mhz)};
        }
    }
    if (why != nullptr) *why = "neither NVML nor the driver gives the memory bus width and clock";
    return std::nullopt;
}

std::optional<PathLimit> nvlink_limit(const std::optional<nvml::NvLink>& nvlink, std::string* why) {
    if (!nvlink) return std::nullopt;
    if (nvlink->active == 0) {
        if (why != nullptr) {
            *why = nvlink->unknown == nvlink->links
                       ? fmt::format("NVML gave no state for any of the GPU's {} NVLink links", nvlink->links)
                       : fmt::format("none of the GPU's {} NVLink links is up", nvlink->links);
        }
        return std::nullopt;
    }
    if (nvlink->active_mbps == 0) {
        if (why != nullptr) {
            *why = fmt::format("{} of the GPU's {} NVLink links are up, and NVML gives no speed for them",
                               nvlink->active, nvlink->links);
        }
        return std::nullopt;
    }
    const double per_link = static_cast<double>(nvlink->active_mbps) / nvlink->active / 1000;
    return PathLimit{
        PathLimit::Link::nvlink, static_cast<double>(nvlink->active_mbps) / 1000,
        fmt::format("NVLink, {} of {} links up at {:.1f} GB/s (NVML)", nvlink->active, nvlink->links, per_link)};
}

DeviceLimits device_limits(const DriverApi& api, int ordinal, const nvml::Library* nvml, const std::string& uuid) {
    DeviceLimits d;
    if (nvml == nullptr || !nvml->loaded()) {
        d.nvml_error = nvml == nullptr ? "NVML was not loaded" : nvml->info().error;
    } else if (const auto handle = nvml->device_by_uuid(uuid, &d.nvml_error)) {
        d.link = nvml::query_link_info(*nvml, *handle);
        d.nvlink = nvml::query_nvlink(*nvml, *handle, d.peer_why);
    }
    d.peer = nvlink_limit(d.nvlink, &d.peer_why);
    if (!d.peer && d.peer_why.empty()) d.peer_why = d.nvml_error;
    d.host = host_link_limit(d.link, &d.host_why);
    if (!d.host && !d.nvml_error.empty()) d.host_why = d.nvml_error;
    const int bus = device_attribute(api, ordinal, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH).value_or(0);
    const int clock = device_attribute(api, ordinal, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE).value_or(0);
    d.memory = memory_limit(d.link, bus, clock, &d.memory_why);
    return d;
}

std::optional<double> limit_of(const DeviceLimits& limits, const CopyFigure& figure) {
    switch (figure.path) {
        case CopyPath::host_to_device:
        case CopyPath::device_to_host:
            if (limits.host) return limits.host->gbps;
            break;
        case CopyPath::both:
            if (limits.host) return 2 * limits.host->gbps;
            break;
        case CopyPath::device_to_device:
            if (limits.memory) return limits.memory->gbps;
            break;
        case CopyPath::peer:
            if (limits.peer) return limits.peer->gbps;
            break;
    }
    return std::nullopt;
}

}  // namespace cumemctl::gpu
