// The whole logical endpoint round trip that `le-bind` performs: check the driver and devices, ask the
// limits, check every size and offset against them, reserve an ID, create (and for a team, add devices),
// wait for construction, optionally export and re-import it, create memory, bind it on each device,
// then undo everything in reverse. Every step is recorded with its result and time, on every path.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cuda/driver.hpp"
#include "gpu/le/logical_endpoint.hpp"
#include "gpu/le/logical_endpoint_support.hpp"
#include "gpu/device/memory_props.hpp"

namespace cumemctl::gpu {

// What le-bind is asked to do.
struct LeBindRequest {
    bool multicast = false;
    std::vector<int> devices;                // the owner (unicast) or the team (multicast)
    std::uint64_t size = 0;                  // bytes bindable per device (CUlogicalEndpointProp.size)
    std::uint64_t offset = 0;                // into the endpoint
    std::uint64_t mem_offset = 0;            // into the allocation
    std::optional<std::uint64_t> bind_size;  // default: the largest that fits
    LocationSpec location;                   // device, or host-numa[:N]
    bool fabric = false;                     // exportable endpoint and memory
    bool counted_ops = false;                // CU_LOGICAL_ENDPOINT_FLAG_COUNTED_OPS
    bool by_address = false;                 // cuLogicalEndpointBindAddr on a mapped range
    bool limits_only = false;                // ask the limits, change nothing
    double timeout_seconds = 5;              // how long to poll for construction
};

// One device's memory and binding as made.
struct LeDeviceBinding {
    int device = 0;
    std::string location;  // "device", "host-numa:0"
    std::uint64_t allocation_size = 0;
    bool bound = false;
};

// Everything le-bind learnt and did, filled as it goes so that a failure still reports what happened.
struct LeBindOutcome {
    LeDriverSupport support;
    std::vector<std::string> warnings;  // attributes the driver did not answer, and the like
    CUlogicalEndpointProp prop{};
    std::optional<LeLimits> limits;
    std::optional<LeViolation> violation;  // the rule the request broke (le-bind stops before the driver)
    std::uint64_t granularity = 0;         // cuMemCreate minimum granularity (largest over the devices)
    std::optional<LeBindPlan> plan;
    std::optional<CUlogicalEndpointId> id;
    std::optional<LeQueryWait> query;         // construction of the endpoint
    std::optional<LeQueryWait> import_query;  // construction of the re-imported endpoint (fabric)
    bool exported = false;
    std::vector<LeDeviceBinding> bindings;
    std::vector<steps::Step> steps;
    std::vector<Problem> undo_failures;
    bool completed = false;  // every step ran, and every undo
};

// Runs the round trip. Throws Error for the first thing that stops it (after everything made so far
// was undone); `out` says how far it got either way. Undo failures do not throw: they are in
// out.undo_failures.
void run_le_bind(const Driver& driver, const LeBindRequest& request, LeBindOutcome& out);

}  // namespace cumemctl::gpu
