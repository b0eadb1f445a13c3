// doctor's evidence, typed: what each family of checks read or measured, one type a family, in place of
// JSON inside. Each type describes its fields once (`fields`: name, member, who reads it); the report's
// JSON is written from that description (evidence_json.cpp) and fleet reads a report back by name through
// the same description (fleet/report_decode.cpp). This header pulls no check in.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "doctor/evidence_copies.hpp"
#include "doctor/evidence_fabric.hpp"
#include "doctor/evidence_fields.hpp"
#include "doctor/evidence_memory.hpp"
#include "doctor/evidence_setup.hpp"

namespace cumemctl::doctor {

// The evidence of one check: one type a family. A closed set held by value, so that an outcome copies
// like the value it is and a reader asks for its family with std::get_if.
using Evidence = std::variant<NoEvidence, NvmlUnavailable, DriverEvidence, DevicesEvidence, CapabilitiesEvidence,
                              MemoryHealthEvidence, FabricEvidence, CopyEvidence, PcieLinkEvidence, NvlinkEvidence,
                              XidEvidence, ContextEvidence, EndpointsEvidence, LocalityEvidence, PeerEvidence,
                              InventoryEvidence, ChannelsEvidence, ImexDomainEvidence, GpudirectEvidence,
                              MemoryEvidence, HostAllocEvidence, PoolTrimEvidence, TimeoutEvidence>;

// The evidence's JSON (a check's "details"), written from its type's field description.
nlohmann::json to_json(const Evidence& evidence);

// One process that held a GPU a check needed, with how long it had run (/proc), or why that is unknown.
struct Holder {
    GpuProcess process;
    std::optional<double> seconds_running;
    Maybe<std::string> seconds_running_unavailable;
};

// Who held the GPU when a check found it short of memory or busy (busy.cpp): the processes NVML lists
// ("held_by"), none, or unknown with why ("held_by": null, "held_by_unavailable").
struct HeldBy {
    std::optional<std::vector<Holder>> holders;
    Maybe<std::string> unavailable;
};

// Writes `held` into `details` ("held_by", "held_by_unavailable").
void add_held_by(nlohmann::json& details, const HeldBy& held);

}  // namespace cumemctl::doctor
