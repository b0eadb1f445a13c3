#include "nvml/nvlink.hpp"

namespace cumemctl::nvml {
namespace {

// One field value of `device`: the value's own result in `r`.
FieldValue field(const Api& api, Device device, unsigned id, unsigned scope, Return& r) {
    FieldValue v{};
    v.fieldId = id, v.scopeId = scope;
    r = api.device_get_field_values(device, 1, &v);
    if (r == kSuccess) r = v.nvmlReturn;
    return v;
}

// The links' states through nvmlDeviceGetNvLinkState, all at the common speed: older NVMLs.
std::optional<NvLink> by_link_state(const Library& nvml, Device device, std::string& why) {
    const Api& api = nvml.api();
    if (api.device_get_nvlink_state == nullptr) {
        why = "nvmlDeviceGetNvLinkState: not in this NVML";
        return std::nullopt;
    }
    NvLink l;
    for (unsigned link = 0; link < kNvlinkMaxLinks; ++link) {
        int active = 0;
        const Return r = api.device_get_nvlink_state(device, link, &active);
        if (r == kErrorInvalidArgument || r == kErrorNotSupported) break;  // past the last link
        ++l.links;
        if (r != kSuccess)
            ++l.unknown;
        else if (active != 0)
            ++l.active;
    }
    if (l.links == 0) {
        why = "NVML lists no NVLink link of this GPU";
        return std::nullopt;
    }
    Return r = kSuccess;
    const FieldValue speed =
        api.device_get_field_values != nullptr ? field(api, device, kFieldNvlinkSpeedCommon, 0, r) : FieldValue{};
    if (api.device_get_field_values != nullptr && r == kSuccess) {
        l.active_mbps = static_cast<unsigned long long>(speed.value.uiVal) * l.active;
    }
    return l;
}

}  // namespace

std::optional<NvLink> query_nvlink(const Library& nvml, Device device, std::string& why) {
    if (!nvml.loaded()) {
        why = nvml.info().error;
        return std::nullopt;
    }
    const Api& api = nvml.api();
    if (api.device_get_field_values == nullptr) return by_link_state(nvml, device, why);
    Return r = kSuccess;
    const FieldValue count = field(api, device, kFieldNvlinkLinkCount, 0, r);
    if (r != kSuccess) return by_link_state(nvml, device, why);
    NvLink l;
    l.links = count.value.uiVal;
    if (l.links == 0 || l.links > 64) {
        why = l.links == 0 ? "the GPU has no NVLink links" : "NVML gave an NVLink link count past 64";
        return std::nullopt;
    }
    for (unsigned link = 0; link < l.links; ++link) {
        FieldValue v[2]{};
        v[0].fieldId = kFieldNvlinkGetState, v[0].scopeId = link;
        v[1].fieldId = kFieldNvlinkGetSpeed, v[1].scopeId = link;
        if (api.device_get_field_values(device, 2, v) != kSuccess || v[0].nvmlReturn != kSuccess) {
            ++l.unknown;
            continue;
        }
        if (v[0].value.uiVal != 1) continue;
        ++l.active;
        if (v[1].nvmlReturn == kSuccess) l.active_mbps += v[1].value.uiVal;
    }
    return l;
}

}  // namespace cumemctl::nvml
