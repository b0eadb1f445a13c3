// A GPU's place in a multi-node NVLink fabric as NVML reports it (GB200/GB300 NVL72, GH200 NVL32): the
// registration state, its status, the cluster UUID and clique ID that name the NVLink domain, and the
// health mask and summary decoded field by field (../shared/mnnvl-facts.md §1). "Attached" is decided
// as go-nvlib and the DRA driver decide it: state COMPLETED, status SUCCESS and a non-zero cluster UUID.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/verdict.hpp"
#include "nvml/nvml.hpp"

namespace cumemctl::nvml {

// One GPU's fabric info. `api` says which call answered ("v3", "v2", "v1"), "" when none could be asked.
struct FabricInfo {
    std::string api;
    Return result = kSuccess;  // the call's return: kSuccess, or kErrorNotSupported (not attached)
    std::string error;         // why NVML gave nothing (a failed call other than NOT_SUPPORTED, no entry point)
    unsigned char state = kFabricStateNotSupported;
    int status = kSuccess;    // nvmlReturn_t; meaningful only when state is COMPLETED
    std::string status_text;  // NVML's words for `status` ("Success", "Insufficient Resources")
    std::array<unsigned char, kFabricUuidLength> cluster_uuid{};
    unsigned clique_id = 0;
    std::optional<unsigned> health_mask;     // v2 and v3
    std::optional<unsigned> health_summary;  // v3 only: 0 not supported, 1 healthy, 2 unhealthy, 3 limited capacity
};

// Asks NVML for one device: nvmlDeviceGetGpuFabricInfoV with v3, then v2 where the library answers
// ARGUMENT_VERSION_MISMATCH or FUNCTION_NOT_FOUND (as DCGM does), else nvmlDeviceGetGpuFabricInfo (v1)
// where the V entry point is missing. Never throws.
FabricInfo query_fabric_info(const Library& nvml, Device device);

// Whether NVML answered at all (an answer of NOT_SUPPORTED counts: it says "not attached").
bool fabric_answered(const FabricInfo& info);
// Whether the cluster UUID is all zero.
bool zero_cluster_uuid(const FabricInfo& info);
// State COMPLETED, status SUCCESS and a non-zero cluster UUID.
bool fabric_attached(const FabricInfo& info);

// "not-supported", "not-started", "in-progress", "completed" ("unknown (N)" otherwise).
std::string fabric_state_name(unsigned char state);
// The cluster UUID as nvidia-smi, DCGM and the DRA driver print it: 8-4-4-4-12 lowercase hex.
std::string cluster_uuid_text(const FabricInfo& info);
// The NVLink domain a GPU belongs to, as the DRA driver names it: "<cluster UUID>.<clique ID>". Clique
// 32766 is the default partition on every rack, so only the pair identifies a domain.
std::string fabric_domain(const FabricInfo& info);

// The health mask's fields, each (mask >> shift) & width with the widths of NVML 12.8 on (the 12.4-12.6
// headers and NCCL's copy have 0x11 for the bandwidth field, which misreads a healthy 0xaa as 0).
struct FabricHealthField {
    std::string_view key;  // "degraded_bandwidth", "route_recovery", ...
    unsigned shift;
    unsigned width;
};
const std::vector<FabricHealthField>& fabric_health_fields();
// A field's raw value in `mask`.
unsigned health_field_value(unsigned mask, const FabricHealthField& field);
// A field's value in words: "not-supported", "degraded"/"full", "in-progress"/"none", "unhealthy"/"healthy",
// the incorrect-configuration reason ("none", "no-partition", ...), "assigned"/"not-assigned".
std::string health_field_word(const FabricHealthField& field, unsigned value);
// The health summary in words: "not-supported", "healthy", "unhealthy", "limited-capacity".
std::string health_summary_name(unsigned summary);

// What one GPU's fabric says, on its own, with why: skip where it is not attached (or NVML cannot say
// on a node not set up for IMEX), else pass, warn or fail. `imex_configured`: this node is set up for
// IMEX, so a fabric that is not (yet) formed, that completed with an error, or that NVML cannot read
// is a problem, not a node without multi-node NVLink.
struct FabricVerdict {
    CheckStatus status = CheckStatus::skip;
    std::string reason;
};
FabricVerdict judge_fabric(const FabricInfo& info, bool imex_configured);

// Where the GPUs of one node (UUID, info) disagree: some attached and some not, or attached GPUs in
// different NVLink domains. "" when they agree.
std::string fabric_disagreement(const std::vector<std::pair<std::string, FabricInfo>>& gpus);

// {"api", "attached", "state", "status", "cluster_uuid", "clique_id", "domain", "health_mask",
//  "health_summary", "health": {field: word}, "error"}; what NVML did not give is null.
nlohmann::json to_json(const FabricInfo& info);

}  // namespace cumemctl::nvml
