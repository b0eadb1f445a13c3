#include "nvml/link_info.hpp"

#include <fmt/format.h>

namespace cumemctl::nvml {
namespace {

// Asks one optional unsigned figure; on failure notes why under `field` (where `why` is given).
template <class Fn, class... Args>
std::optional<unsigned> ask(const Library& nvml, std::vector<std::pair<std::string, std::string>>* why,
                            const char* field, const char* call, Fn fn, Args... args) {
    if (fn == nullptr) {
        if (why != nullptr) why->emplace_back(field, fmt::format("{}: not in this NVML", call));
        return std::nullopt;
    }
    unsigned value = 0;
    if (const Return r = fn(args..., &value); r != kSuccess) {
        if (why != nullptr) why->emplace_back(field, nvml.describe(call, r));
        return std::nullopt;
    }
    return value;
}

void ask_now(const Library& nvml, Device device, PcieLink& link,
             std::vector<std::pair<std::string, std::string>>* why) {
    const Api& api = nvml.api();
    link.generation = ask(nvml, why, "pcie_generation", "nvmlDeviceGetCurrPcieLinkGeneration",
                          api.device_get_curr_pcie_generation, device);
    link.width = ask(nvml, why, "pcie_width", "nvmlDeviceGetCurrPcieLinkWidth", api.device_get_curr_pcie_width, device);
    link.replay_counter = ask(nvml, why, "pcie_replay_counter", "nvmlDeviceGetPcieReplayCounter",
                              api.device_get_pcie_replay_counter, device);
}

// The C2C link through the field values: its link count, then each link's status and maximum.
std::optional<C2cLink> ask_c2c(const Library& nvml, Device device,
                               std::vector<std::pair<std::string, std::string>>& why) {
    const auto fields = nvml.api().device_get_field_values;
    if (fields == nullptr) return std::nullopt;
    FieldValue count{};
    count.fieldId = kFieldC2cLinkCount;
    if (const Return r = fields(device, 1, &count); r != kSuccess || count.nvmlReturn != kSuccess) {
        why.emplace_back("c2c", nvml.describe("nvmlDeviceGetFieldValues", r != kSuccess ? r : count.nvmlReturn));
        return std::nullopt;
    }
    C2cLink c2c;
    c2c.links = count.value.uiVal;
    if (c2c.links == 0 || c2c.links > 64) return std::nullopt;
    for (unsigned link = 0; link < c2c.links; ++link) {
        FieldValue v[2]{};
        v[0].fieldId = kFieldC2cLinkStatus, v[0].scopeId = link;
        v[1].fieldId = kFieldC2cLinkMaxBw, v[1].scopeId = link;
        if (fields(device, 2, v) != kSuccess || v[0].nvmlReturn != kSuccess) {
            ++c2c.unknown_links;
            continue;
        }
        if (v[0].value.uiVal != 1) continue;
        ++c2c.active_links;
        if (v[1].nvmlReturn == kSuccess) c2c.max_mbps += v[1].value.uiVal;
    }
    return c2c;
}

}  // namespace

PcieLink query_pcie_now(const Library& nvml, Device device) {
    PcieLink link;
    if (nvml.loaded()) ask_now(nvml, device, link, nullptr);
    return link;
}

LinkInfo query_link_info(const Library& nvml, Device device) {
    LinkInfo info;
    if (!nvml.loaded()) return info;
    const Api& api = nvml.api();
    auto* why = &info.unavailable;
    ask_now(nvml, device, info.pcie, why);
    info.pcie.max_generation = ask(nvml, why, "pcie_max_generation", "nvmlDeviceGetMaxPcieLinkGeneration",
                                   api.device_get_max_pcie_generation, device);
    info.pcie.max_width =
        ask(nvml, why, "pcie_max_width", "nvmlDeviceGetMaxPcieLinkWidth", api.device_get_max_pcie_width, device);
    info.pcie.gpu_max_generation = ask(nvml, why, "pcie_gpu_max_generation", "nvmlDeviceGetGpuMaxPcieLinkGeneration",
                                       api.device_get_gpu_max_pcie_generation, device);
    info.memory.width_bits =
        ask(nvml, why, "memory_bus_width", "nvmlDeviceGetMemoryBusWidth", api.device_get_memory_bus_width, device);
    info.memory.max_clock_mhz = ask(nvml, why, "max_memory_clock", "nvmlDeviceGetMaxClockInfo",
                                    api.device_get_max_clock_info, device, kClockMem);
    info.c2c = ask_c2c(nvml, device, info.unavailable);
    return info;
}

}  // namespace cumemctl::nvml
