// CUDA 13.3 logical endpoints as owned resources: a reserved range of endpoint IDs, an endpoint created
// on one of them, and a binding of memory into an endpoint. Each undoes itself when it goes out of
// scope (release, destroy, unbind), recording the undo in the StepLog, so that nothing is left behind
// on any path. Waiting for construction polls the non-blocking cuLogicalEndpointQuery with a deadline.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/scope_exit.hpp"
#include "gpu/le/logical_endpoint_checks.hpp"
#include "steps/step_log.hpp"

namespace cumemctl::gpu {

// A range of logical endpoint IDs from cuLogicalEndpointIdReserve; released when destroyed.
class LeIdRange {
public:
    LeIdRange(StepLog& log, std::uint32_t count);

    CUlogicalEndpointId base() const { return base_; }
    std::uint32_t count() const { return count_; }
    // "id 3" or "ids 3 to 4".
    std::string describe() const;

private:
    // cuLogicalEndpointIdReserve as a step; returns its undo, cuLogicalEndpointIdRelease as an undo step.
    std::function<void()> reserve();

    StepLog& log_;
    CUlogicalEndpointId base_ = 0;
    std::uint32_t count_ = 0;
    ScopeExit<std::function<void()>> release_;  // made once the ids are reserved
};

// How a wait for construction went: whether it completed, how often Query was asked, how long it took.
struct LeQueryWait {
    bool constructed = false;
    int polls = 0;
    double waited_seconds = 0;
};

// Polls cuLogicalEndpointQuery(id, count) until it says constructed or `timeout` has passed, sleeping
// briefly between polls (50 us, doubling to 10 ms). Throws Error when Query fails. Returns with
// constructed = false when the deadline passed; at least one poll is always made.
LeQueryWait poll_constructed(const DriverApi& api, CUlogicalEndpointId id, std::uint32_t count,
                             std::chrono::duration<double> timeout);

// A logical endpoint: created on an ID (or imported into one) and destroyed when it goes away.
// It remembers what the driver's binding rules depend on: the owner or the added devices, and whether
// construction has been seen to complete.
class LogicalEndpoint {
public:
    // cuLogicalEndpointCreate(id, prop).
    LogicalEndpoint(StepLog& log, CUlogicalEndpointId id, const CUlogicalEndpointProp& prop);
    // cuLogicalEndpointImport(id, handle, FABRIC): an imported endpoint, which binds nothing when unicast.
    LogicalEndpoint(StepLog& log, CUlogicalEndpointId id, const void* fabric_handle);

    // cuLogicalEndpointAddDevice (multicast only; a unicast endpoint is refused before the call).
    void add_device(int device);
    // Polls Query until constructed; throws Error (failed) naming `waited_for` when the deadline passes.
    // Its remedy names the construction timeout through setting_name.
    LeQueryWait wait_constructed(std::chrono::duration<double> timeout, const std::string& waited_for);
    // cuLogicalEndpointExport to a fabric handle of le::kFabricHandleBytes bytes.
    std::vector<unsigned char> export_fabric();

    // Throws Error (usage) when binding on `device` would break a driver rule: before construction
    // completed, an imported unicast endpoint, a unicast device other than the owner, a multicast
    // device that was not added.
    void check_bind_device(int device) const;

    CUlogicalEndpointId id() const { return id_; }
    std::uint64_t size() const { return prop_.size; }
    bool multicast() const { return static_cast<int>(prop_.type) == le::kTypeMulticast; }
    const std::vector<int>& added() const { return added_; }

private:
    // cuLogicalEndpointCreate or cuLogicalEndpointImport as a step; each returns destroy_step().
    std::function<void()> create();
    std::function<void()> import_fabric(const void* fabric_handle);
    // The endpoint's undo: cuLogicalEndpointDestroy as an undo step.
    std::function<void()> destroy_step();

    StepLog& log_;
    CUlogicalEndpointId id_ = 0;
    CUlogicalEndpointProp prop_{};
    bool imported_ = false;
    bool constructed_ = false;
    std::vector<int> added_;
    ScopeExit<std::function<void()>> destroy_;  // made once the endpoint exists
};

// Where bound memory comes from: an allocation handle (BindMem) or a mapped address (BindAddr).
struct LeSource {
    CUmemGenericAllocationHandle handle = 0;  // used when ptr is 0
    CUdeviceptr ptr = 0;                      // the mapped address of the allocation's start
};

// A binding of memory into an endpoint on one device; unbound when it goes away.
class LeBinding {
public:
    // Checks the device rule and the plan against the limits (Error, usage; the remedy naming the
    // settings through setting_name), then binds with cuLogicalEndpointBindMem, or cuLogicalEndpointBindAddr
    // at ptr + mem_offset when source.ptr is set.
    LeBinding(StepLog& log, const LogicalEndpoint& endpoint, int device, const LeSource& source, const LeBindPlan& plan,
              const LeLimits& limits);

    int device() const { return device_; }
    const LeBindPlan& plan() const { return plan_; }
    bool by_address() const { return by_address_; }

private:
    // Checks and binds as a step; returns the binding's undo, cuLogicalEndpointUnbind as an undo step.
    std::function<void()> bind(const LogicalEndpoint& endpoint, const LeSource& source, const LeLimits& limits);

    StepLog& log_;
    CUlogicalEndpointId id_ = 0;
    int device_ = 0;
    LeBindPlan plan_;
    bool by_address_ = false;
    ScopeExit<std::function<void()>> unbind_;  // made once the memory is bound
};

}  // namespace cumemctl::gpu
