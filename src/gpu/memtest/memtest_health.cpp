#include "gpu/memtest/memtest_health.hpp"

#include <algorithm>

namespace cumemctl::gpu::memtest {

XidWatch::XidWatch(const nvml::Library& nvml, nvml::Device device) : nvml_(&nvml) {
    const nvml::Api& api = nvml.api();
    if (api.event_set_create == nullptr || api.device_register_events == nullptr || api.event_set_wait == nullptr ||
        api.event_set_free == nullptr) {
        unavailable_ = "nvmlEventSetCreate: not in this NVML";
        return;
    }
    if (const nvml::Return r = api.event_set_create(&set_); r != nvml::kSuccess) {
        unavailable_ = nvml.describe("nvmlEventSetCreate", r);
        set_ = nullptr;
        return;
    }
    if (const nvml::Return r = api.device_register_events(device, nvml::kEventTypeXidCriticalError, set_);
        r != nvml::kSuccess) {
        unavailable_ = nvml.describe("nvmlDeviceRegisterEvents", r);
        api.event_set_free(set_);
        set_ = nullptr;
    }
}

XidWatch::~XidWatch() {
    if (set_ != nullptr) nvml_->api().event_set_free(set_);
}

std::vector<unsigned long long> XidWatch::collect() {
    std::vector<unsigned long long> xids;
    if (set_ == nullptr) return xids;
    for (int i = 0; i < 1000; ++i) {  // bounded: a storm of events is cut, not waited out
        nvml::EventData data{};
        if (nvml_->api().event_set_wait(set_, &data, 0) != nvml::kSuccess) break;
        if (data.eventType == nvml::kEventTypeXidCriticalError) xids.push_back(data.eventData);
    }
    return xids;
}

bool critical_xid(unsigned long long xid) {
    // 48 double-bit ECC; 63, 64 row remapping recorded or failed; 74 NVLink; 79 fallen off the bus;
    // 92 high single-bit ECC rate; 94, 95 contained and uncontained ECC errors; 119, 120 GSP.
    constexpr unsigned long long kCritical[] = {48, 63, 64, 74, 79, 92, 94, 95, 119, 120};
    return std::find(std::begin(kCritical), std::end(kCritical), xid) != std::end(kCritical);
}

std::optional<long long> delta(const std::optional<std::uint64_t>& before, const std::optional<std::uint64_t>& after) {
    if (!before || !after) return std::nullopt;
    return static_cast<long long>(*after) - static_cast<long long>(*before);
}

nlohmann::json to_json(const HealthWatch& w) {
    auto opt = [](const std::optional<long long>& v) -> nlohmann::json {
        return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
    };
    nlohmann::json d{
        {"ecc_corrected_volatile", opt(delta(w.before.ecc_corrected_volatile, w.after.ecc_corrected_volatile))},
        {"ecc_uncorrected_volatile", opt(delta(w.before.ecc_uncorrected_volatile, w.after.ecc_uncorrected_volatile))},
        {"ecc_corrected_aggregate", opt(delta(w.before.ecc_corrected_aggregate, w.after.ecc_corrected_aggregate))},
        {"ecc_uncorrected_aggregate",
         opt(delta(w.before.ecc_uncorrected_aggregate, w.after.ecc_uncorrected_aggregate))}};
    if (w.before.remapped_rows && w.after.remapped_rows) {
        d["remapped_rows_corrected"] =
            static_cast<long long>(w.after.remapped_rows->corrected) - w.before.remapped_rows->corrected;
        d["remapped_rows_uncorrected"] =
            static_cast<long long>(w.after.remapped_rows->uncorrected) - w.before.remapped_rows->uncorrected;
        d["remap_pending_appeared"] = w.after.remapped_rows->pending && !w.before.remapped_rows->pending;
        d["remap_failure_appeared"] = w.after.remapped_rows->failure && !w.before.remapped_rows->failure;
    } else {
        d["remapped_rows_corrected"] = nullptr;
        d["remapped_rows_uncorrected"] = nullptr;
        d["remap_pending_appeared"] = nullptr;
        d["remap_failure_appeared"] = nullptr;
    }
    if (w.before.retired_pages && w.after.retired_pages) {
        d["retired_pages"] =
            static_cast<long long>(w.after.retired_pages->single_bit + w.after.retired_pages->double_bit) -
            (w.before.retired_pages->single_bit + w.before.retired_pages->double_bit);
    } else {
        d["retired_pages"] = nullptr;
    }
    nlohmann::json j{
        {"before", nvml::to_json(w.before)}, {"after", nvml::to_json(w.after)}, {"delta", d}, {"xids", w.xids}};
    j["xid_unavailable"] = w.xid_unavailable.empty() ? nlohmann::json(nullptr) : nlohmann::json(w.xid_unavailable);
    return j;
}

}  // namespace cumemctl::gpu::memtest
