#include "nvml/fabric_info.hpp"

#include <algorithm>
#include <cstring>
#include <map>

#include <fmt/format.h>

#include "base/enum_words.hpp"

namespace cumemctl::nvml {
namespace {

// Copies the fields every version shares.
template <class Raw>
void take_common(FabricInfo& info, const Raw& raw) {
    std::memcpy(info.cluster_uuid.data(), raw.clusterUuid, kFabricUuidLength);
    info.status = raw.status;
    info.clique_id = raw.cliqueId;
    info.state = raw.state;
}

// The call's result into `info`: kSuccess and NOT_SUPPORTED are answers, anything else an error.
bool take_result(const Library& nvml, FabricInfo& info, const char* call, Return r) {
    info.result = r;
    if (r == kSuccess || r == kErrorNotSupported) return true;
    info.error = nvml.describe(call, r);
    return false;
}

// nvmlDeviceGetGpuFabricInfoV with v3, then v2; false when neither version is accepted.
bool ask_versioned(const Library& nvml, Device device, FabricInfo& info) {
    const Api& api = nvml.api();
    GpuFabricInfoV3 v3{};
    v3.version = kGpuFabricInfoV3Version;
    Return r = api.device_get_fabric_info_v(device, &v3);
    if (r != kErrorArgumentVersionMismatch && r != kErrorFunctionNotFound) {
        info.api = "v3";
        if (take_result(nvml, info, "nvmlDeviceGetGpuFabricInfoV", r) && r == kSuccess) {
            take_common(info, v3);
            info.health_mask = v3.healthMask;
            info.health_summary = v3.healthSummary;
        }
        return true;
    }
    GpuFabricInfoV2 v2{};
    v2.version = kGpuFabricInfoV2Version;
    r = api.device_get_fabric_info_v(device, &v2);
    if (r == kErrorArgumentVersionMismatch || r == kErrorFunctionNotFound) return false;
    info.api = "v2";
    if (take_result(nvml, info, "nvmlDeviceGetGpuFabricInfoV", r) && r == kSuccess) {
        take_common(info, v2);
        info.health_mask = v2.healthMask;
    }
    return true;
}

const char* status_words(const Library& nvml, int status) {
    const char* text = nvml.api().error_string != nullptr ? nvml.api().error_string(status) : nullptr;
    return text != nullptr ? text : "unknown";
}

// NVML's fabric states; a state newer than the table reads as "unknown (N)".
constexpr auto kFabricStateWords = enum_words<unsigned char>({{kFabricStateNotSupported, "not-supported"},
                                                              {kFabricStateNotStarted, "not-started"},
                                                              {kFabricStateInProgress, "in-progress"},
                                                              {kFabricStateCompleted, "completed"}},
                                                             "unknown");

}  // namespace

FabricInfo query_fabric_info(const Library& nvml, Device device) {
    const Api& api = nvml.api();
    FabricInfo info;
    bool answered = false;
    if (api.device_get_fabric_info_v != nullptr) answered = ask_versioned(nvml, device, info);
    if (!answered && api.device_get_fabric_info != nullptr) {
        GpuFabricInfoV1 v1{};
        const Return r = api.device_get_fabric_info(device, &v1);
        info.api = "v1";
        info.error.clear();
        if (take_result(nvml, info, "nvmlDeviceGetGpuFabricInfo", r) && r == kSuccess) take_common(info, v1);
        answered = true;
    }
    if (!answered) {
        info.api.clear();
        info.error = api.device_get_fabric_info_v != nullptr
                         ? "nvmlDeviceGetGpuFabricInfoV accepts neither v3 nor v2, and this NVML has no "
                           "nvmlDeviceGetGpuFabricInfo"
                         : "this NVML has no fabric info (nvmlDeviceGetGpuFabricInfoV, nvmlDeviceGetGpuFabricInfo)";
    }
    if (info.result == kSuccess && info.error.empty()) info.status_text = status_words(nvml, info.status);
    return info;
}

bool fabric_answered(const FabricInfo& info) {
    return !info.api.empty() && info.error.empty();
}

bool zero_cluster_uuid(const FabricInfo& info) {
    return std::all_of(info.cluster_uuid.begin(), info.cluster_uuid.end(), [](unsigned char b) { return b == 0; });
}

bool fabric_attached(const FabricInfo& info) {
    return fabric_answered(info) && info.result == kSuccess && info.state == kFabricStateCompleted &&
           info.status == kSuccess && !zero_cluster_uuid(info);
}

std::string fabric_state_name(unsigned char state) {
    if (const std::optional<std::string_view> word = kFabricStateWords.find(state)) return std::string(*word);
    return fmt::format("unknown ({})", state);
}

std::string cluster_uuid_text(const FabricInfo& info) {
    std::string hex;
    for (unsigned char b : info.cluster_uuid) hex += fmt::format("{:02x}", b);
    return fmt::format("{}-{}-{}-{}-{}", hex.substr(0, 8), hex.substr(8, 4), hex.substr(12, 4), hex.substr(16, 4),
                       hex.substr(20));
}

std::string fabric_domain(const FabricInfo& info) {
    return fmt::format("{}.{}", cluster_uuid_text(info), info.clique_id);
}

const std::vector<FabricHealthField>& fabric_health_fields() {
    // NVML_GPU_FABRIC_HEALTH_MASK_{SHIFT,WIDTH}_* of the 13.2 header (mnnvl-facts.md §1.3).
    static const std::vector<FabricHealthField> fields{
        {"degraded_bandwidth", 0, 0x3},      {"route_recovery", 2, 0x3},          {"route_unhealthy", 4, 0x3},
        {"access_timeout_recovery", 6, 0x3}, {"incorrect_configuration", 8, 0xf}, {"partition_assigned", 12, 0x3},
    };
    return fields;
}

unsigned health_field_value(unsigned mask, const FabricHealthField& field) {
    return (mask >> field.shift) & field.width;
}

std::string health_field_word(const FabricHealthField& field, unsigned value) {
    if (value == 0) return "not-supported";
    if (field.key == "incorrect_configuration") {
        static const char* reasons[] = {"",
                                        "none",
                                        "incorrect-sysguid",
                                        "incorrect-chassis-sn",
                                        "no-partition",
                                        "insufficient-nvlinks",
                                        "incompatible-gpu-fw",
                                        "invalid-location",
                                        "gpu-state-invalid"};
        return value < std::size(reasons) ? reasons[value] : fmt::format("unknown ({})", value);
    }
    // 1 TRUE, 2 FALSE for the two-bit fields.
    static const std::map<std::string_view, std::pair<const char*, const char*>> words{
        {"degraded_bandwidth", {"degraded", "full"}},         {"route_recovery", {"in-progress", "none"}},
        {"route_unhealthy", {"unhealthy", "healthy"}},        {"access_timeout_recovery", {"in-progress", "none"}},
        {"partition_assigned", {"assigned", "not-assigned"}},
    };
    const auto it = words.find(field.key);
    if (it == words.end() || value > 2) return fmt::format("unknown ({})", value);
    return value == 1 ? it->second.first : it->second.second;
}

std::string health_summary_name(unsigned summary) {
    static const char* names[] = {"not-supported", "healthy", "unhealthy", "limited-capacity"};
    return summary < std::size(names) ? names[summary] : fmt::format("unknown ({})", summary);
}

namespace {

// The health problems of an attached GPU, worst first: fails, then warnings.
void health_problems(const FabricInfo& info, std::vector<std::string>& fails, std::vector<std::string>& warns) {
    if (info.health_summary == 2) fails.push_back("NVML's fabric health summary is UNHEALTHY");
    if (info.health_summary == 3) warns.push_back("NVML's fabric health summary is LIMITED_CAPACITY");
    if (!info.health_mask) return;
    const auto& f = fabric_health_fields();
    auto value = [&](std::size_t i) { return health_field_value(*info.health_mask, f[i]); };
    if (value(2) == 1) fails.push_back("a fabric route is unhealthy");
    if (const unsigned c = value(4); c >= 2) {
        fails.push_back(fmt::format("the fabric reports an incorrect configuration: {}", health_field_word(f[4], c)));
    }
    if (value(0) == 1) warns.push_back("the fabric bandwidth is degraded");
    if (value(1) == 1) warns.push_back("a fabric route recovery is in progress");
    if (value(3) == 1) warns.push_back("a fabric access-timeout recovery is in progress");
    if (value(5) == 2) warns.push_back("no fabric partition is assigned");
}

}  // namespace

FabricVerdict judge_fabric(const FabricInfo& info, bool imex_configured) {
    using S = CheckStatus;
    if (!fabric_answered(info)) {
        if (!imex_configured) return {S::skip, info.error};
        return {S::warn, fmt::format("NVML cannot say whether the GPU joined its NVLink fabric: {}", info.error)};
    }
    if (info.result == kErrorNotSupported || info.state == kFabricStateNotSupported) {
        return {S::skip, "not attached to a multi-node NVLink fabric (NVML: fabric not supported)"};
    }
    if (info.state != kFabricStateCompleted) {
        const std::string state = info.state == kFabricStateInProgress ? "IN_PROGRESS" : "NOT_STARTED";
        if (imex_configured) {
            return {S::warn, fmt::format("the GPU has not joined its NVLink fabric yet (state {}) on a node "
                                         "configured for IMEX",
                                         state)};
        }
        return {S::skip, fmt::format("not attached to a multi-node NVLink fabric (state {}, and this node "
                                     "is not configured for IMEX)",
                                     state)};
    }
    if (info.status != kSuccess) {
        const std::string why =
            fmt::format("the fabric registration completed with an error: {} ({})", info.status_text, info.status);
        if (imex_configured) return {S::fail, why};
        return {S::skip, fmt::format("not attached to a multi-node NVLink fabric ({})", why)};
    }
    if (zero_cluster_uuid(info)) {
        return {S::skip,
                "not attached to a multi-node NVLink fabric (registration completed with a zero "
                "cluster UUID: NVSwitches within this node only)"};
    }
    std::vector<std::string> fails, warns;
    health_problems(info, fails, warns);
    const std::string where = fmt::format("NVLink domain {}", fabric_domain(info));
    if (!fails.empty()) return {S::fail, fmt::format("{} ({})", fmt::join(fails, "; "), where)};
    if (!warns.empty()) return {S::warn, fmt::format("{} ({})", fmt::join(warns, "; "), where)};
    const std::string summary =
        info.health_summary ? "health " + health_summary_name(*info.health_summary) : "no health summary";
    return {S::pass, fmt::format("attached to {}; {}", where, summary)};
}

std::string fabric_disagreement(const std::vector<std::pair<std::string, FabricInfo>>& gpus) {
    std::map<std::string, std::vector<std::string>> by_domain;  // domain ("" not attached) -> GPUs
    for (const auto& [uuid, info] : gpus) {
        if (!fabric_answered(info)) continue;
        by_domain[fabric_attached(info) ? fabric_domain(info) : std::string()].push_back(uuid);
    }
    if (by_domain.size() < 2) return "";
    std::vector<std::string> parts;
    for (const auto& [domain, uuids] : by_domain) {
        parts.push_back(fmt::format("{} {}", fmt::join(uuids, ", "),
                                    domain.empty() ? std::string("not attached") : "in " + domain));
    }
    const bool mixed = by_domain.count("") != 0;
    return fmt::format("the GPUs of this node {}: {}",
                       mixed ? "disagree: some are attached to a multi-node NVLink fabric and some are not"
                             : "are in different NVLink domains",
                       fmt::join(parts, "; "));
}

nlohmann::json to_json(const FabricInfo& info) {
    const bool answered = fabric_answered(info);
    const bool success = answered && info.result == kSuccess;
    nlohmann::json j{{"api", info.api.empty() ? nlohmann::json(nullptr) : nlohmann::json(info.api)},
                     {"attached", fabric_attached(info)}};
    auto or_null = [success](auto value) { return success ? nlohmann::json(value) : nlohmann::json(nullptr); };
    j["result"] = answered ? nlohmann::json(info.result) : nlohmann::json(nullptr);
    j["state"] = answered ? nlohmann::json(fabric_state_name(success ? info.state : kFabricStateNotSupported))
                          : nlohmann::json(nullptr);
    const bool completed = success && info.state == kFabricStateCompleted;
    j["status"] = completed ? nlohmann::json(info.status_text) : nlohmann::json(nullptr);
    j["status_code"] = completed ? nlohmann::json(info.status) : nlohmann::json(nullptr);
    j["cluster_uuid"] = or_null(cluster_uuid_text(info));
    j["clique_id"] = or_null(info.clique_id);
    j["domain"] = fabric_attached(info) ? nlohmann::json(fabric_domain(info)) : nlohmann::json(nullptr);
    j["health_mask"] = success && info.health_mask ? nlohmann::json(*info.health_mask) : nlohmann::json(nullptr);
    j["health_summary"] = success && info.health_summary ? nlohmann::json(health_summary_name(*info.health_summary))
                                                         : nlohmann::json(nullptr);
    nlohmann::json health = nullptr;
    if (success && info.health_mask) {
        health = nlohmann::json::object();
        for (const auto& f : fabric_health_fields()) {
            health[std::string(f.key)] = health_field_word(f, health_field_value(*info.health_mask, f));
        }
    }
    j["health"] = std::move(health);
    j["error"] = info.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(info.error);
    return j;
}

}  // namespace cumemctl::nvml
