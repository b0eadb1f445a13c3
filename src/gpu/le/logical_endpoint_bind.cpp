#include "gpu/le/logical_endpoint_bind.hpp"

#include <memory>

#include <fmt/format.h>

#include "base/setting.hpp"
#include "gpu/device/devices.hpp"
#include "gpu/le/logical_endpoint_diagnosis.hpp"
#include "gpu/le/logical_endpoint_memory.hpp"
#include "util/size.hpp"

namespace cumemctl::gpu {
namespace {

// Requires a logical endpoint attribute to be set on a device: 0 is unavailable (exit 3); an attribute
// the driver does not answer is a warning, and the driver decides.
void require_attribute(const DriverApi& api, int device, int attribute, const char* name, const char* what,
                       LeBindOutcome& out) {
    const auto v = device_attribute(api, device, attribute);
    if (!v) {
        out.warnings.push_back(
            fmt::format("device {} does not answer {} ({}); trying anyway", device, name, attribute));
    } else if (*v == 0) {
        throw Error(Problem{.exit_code = ExitCode::unavailable,
                            .message = fmt::format("device {} does not support {}", device, what),
                            .cause = fmt::format("{} ({}) is 0", name, attribute),
                            .remedy = "run 'cumemctl devices' to see which logical endpoint features each device has"});
    }
}

void check_devices(const DriverApi& api, const LeBindRequest& req, LeBindOutcome& out) {
    for (int d : req.devices) {
        if (req.multicast) {
            require_attribute(api, d, le::kAttrMulticastSupported,
                              "CU_DEVICE_ATTRIBUTE_LOGICAL_ENDPOINT_MULTICAST_SUPPORTED", "multicast logical endpoints",
                              out);
        } else {
            require_attribute(api, d, le::kAttrUnicastSupported,
                              "CU_DEVICE_ATTRIBUTE_LOGICAL_ENDPOINT_UNICAST_SUPPORTED", "unicast logical endpoints",
                              out);
        }
        if (req.counted_ops) {
            require_attribute(api, d, le::kAttrCountedOpsSupported,
                              "CU_DEVICE_ATTRIBUTE_LOGICAL_ENDPOINT_COUNTED_OPS_SUPPORTED",
                              "counted operations on logical endpoints", out);
        }
    }
}

// The memory of each device's binding. Host-NUMA memory must be on the node closest to the device.
std::vector<CUmemAllocationProp> memory_props(const DriverApi& api, const LeBindRequest& req) {
    if (req.location.type != CU_MEM_LOCATION_TYPE_DEVICE && req.location.type != CU_MEM_LOCATION_TYPE_HOST_NUMA) {
        throw Error(Problem{.exit_code = ExitCode::usage,
                            .message = "logical endpoints bind device or host-NUMA memory",
                            .remedy = fmt::format("use {} device, host-numa (the node closest to each device) or "
                                                  "host-numa:N",
                                                  setting_name(Setting::location))});
    }
    MemoryRequest m;
    m.location = req.location;
    m.handle_type = req.fabric ? CU_MEM_HANDLE_TYPE_FABRIC : CU_MEM_HANDLE_TYPE_NONE;
    std::vector<CUmemAllocationProp> props;
    for (int d : req.devices) {
        props.push_back(allocation_prop(api, m, d));
        if (req.location.type != CU_MEM_LOCATION_TYPE_HOST_NUMA || !req.location.numa_node) continue;
        const auto closest = device_attribute(api, d, CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID);
        if (!closest || *closest < 0) {
            throw Error(Problem{.exit_code = ExitCode::unavailable,
                                .message = fmt::format("device {} has no host NUMA node to bind memory from", d),
                                .cause = "CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID is unknown or -1",
                                .remedy = fmt::format("use {} device", setting_name(Setting::location))});
        }
        if (*closest != *req.location.numa_node) {
            throw Error(Problem{
                .exit_code = ExitCode::usage,
                .message =
                    fmt::format("host-NUMA node {} is not the node closest to device {} (its "
                                "CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID is {}): bound host memory must be on that node",
                                *req.location.numa_node, d, *closest),
                .remedy = fmt::format("nearest valid: {0} host-numa:{1} or {0} host-numa (each device's own node)",
                                      setting_name(Setting::location), *closest)});
        }
    }
    return props;
}

CUlogicalEndpointProp endpoint_prop(const LeBindRequest& req) {
    CUlogicalEndpointProp p{};
    if (req.multicast) {
        p.type = static_cast<CUlogicalEndpointType>(le::kTypeMulticast);
        p.multicast.numDevices = static_cast<unsigned int>(req.devices.size());
    } else {
        p.type = static_cast<CUlogicalEndpointType>(le::kTypeUnicast);
        p.unicast.device = req.devices.front();
    }
    p.size = req.size;
    p.ipcHandleTypes = req.fabric ? static_cast<unsigned int>(le::kIpcFabric) : 0U;
    p.flags = req.counted_ops ? le::kFlagCountedOps : 0U;
    return p;
}

LeLimits ask_limits(StepLog& log, const CUlogicalEndpointProp& prop) {
    LeLimits l;
    cuuint64_t align = 0, max = 0;
    steps::Step& s =
        log.call("ask limits", "cuLogicalEndpointGetLimits", log.api().cuLogicalEndpointGetLimits, &align, &max, &prop);
    s.detail = fmt::format("bind alignment {}, max size {}", format_size(align), format_size(max));
    if (align == 0) {
        throw Error(ExitCode::failed, "cuLogicalEndpointGetLimits reported a bind alignment of 0",
                    "this is a driver problem; report it with the driver version");
    }
    l.bind_alignment = align;
    l.max_size = max;
    return l;
}

// The largest minimum granularity of the devices' memory.
std::uint64_t ask_granularity(StepLog& log, const LeBindRequest& req, const std::vector<CUmemAllocationProp>& props) {
    std::uint64_t g = 0;
    for (std::size_t i = 0; i < props.size(); ++i) {
        const CUmemAllocationProp& p = props[i];
        size_t one = 0;
        steps::Step& s = log.call(
            fmt::format("ask granularity of {} memory for device {}", location_name(p.location), req.devices[i]),
            "cuMemGetAllocationGranularity", log.api().cuMemGetAllocationGranularity, &one, &p,
            CU_MEM_ALLOC_GRANULARITY_MINIMUM);
        s.detail = format_size(one);
        g = std::max<std::uint64_t>(g, one);
    }
    if (g == 0) {
        throw Error(ExitCode::failed, "cuMemGetAllocationGranularity reported a granularity of 0",
                    "this is a driver problem; report it with the driver version");
    }
    return g;
}

std::string waited_for(const LeBindRequest& req, CUlogicalEndpointId id) {
    if (!req.multicast) return fmt::format("unicast endpoint {} owned by device {}", id, req.devices.front());
    return fmt::format("multicast endpoint {} with a team of {} devices ({})", id, req.devices.size(),
                       fmt::join(req.devices, ","));
}

// What exists while the round trip runs; members go in reverse: unbind, destroy, release ids, memory.
struct Held {
    std::vector<std::unique_ptr<LeMemory>> memory;
    std::optional<LeIdRange> ids;
    std::optional<LogicalEndpoint> endpoint;
    std::optional<LogicalEndpoint> imported;
    std::vector<std::unique_ptr<LeBinding>> bindings;
};

void round_trip(StepLog& log, const LeBindRequest& req, const std::vector<CUmemAllocationProp>& mprops,
                LeBindOutcome& out) {
    const auto timeout = std::chrono::duration<double>(req.timeout_seconds);
    Held h;
    h.ids.emplace(log, req.fabric ? 2U : 1U);
    out.id = h.ids->base();
    h.endpoint.emplace(log, h.ids->base(), out.prop);
    if (req.multicast) {
        for (int d : req.devices) h.endpoint->add_device(d);
    }
    out.query = h.endpoint->wait_constructed(timeout, waited_for(req, *out.id));
    if (req.fabric) {
        const auto handle = h.endpoint->export_fabric();
        out.exported = true;
        h.imported.emplace(log, h.ids->base() + 1, handle.data());
        out.import_query = h.imported->wait_constructed(
            timeout, fmt::format("endpoint {} imported from endpoint {}", h.ids->base() + 1, *out.id));
    }
    for (std::size_t i = 0; i < req.devices.size(); ++i) {
        h.memory.push_back(std::make_unique<LeMemory>(log, mprops[i], out.plan->allocation_size, req.devices[i],
                                                      req.by_address, out.limits->bind_alignment));
    }
    for (std::size_t i = 0; i < req.devices.size(); ++i) {
        const LeMemory& m = *h.memory[i];
        h.bindings.push_back(std::make_unique<LeBinding>(log, *h.endpoint, req.devices[i],
                                                         LeSource{m.handle(), m.ptr()}, *out.plan, *out.limits));
        out.bindings[i].bound = true;
    }
}

void run_steps(StepLog& log, const Driver& driver, const LeBindRequest& req, LeBindOutcome& out) {
    out.support = le_driver_support(driver);
    require_logical_endpoints(out.support);
    if (req.devices.empty()) {
        throw Error(ExitCode::usage, "no device to bind on",
                    fmt::format("give {}", setting_name(Setting::endpoint_devices)));
    }
    const DriverApi& api = driver.api();
    check_devices(api, req, out);
    const auto mprops = memory_props(api, req);
    out.prop = endpoint_prop(req);
    out.limits = ask_limits(log, out.prop);
    out.violation = check_endpoint_size(req.size, *out.limits);
    if (req.limits_only) {
        out.completed = true;
        return;
    }
    if (out.violation) refuse(*out.violation);
    out.granularity = ask_granularity(log, req, mprops);
    LeBindPlan plan;
    plan.endpoint_size = req.size;
    plan.allocation_size = round_up(req.size, out.granularity);
    plan.offset = req.offset;
    plan.mem_offset = req.mem_offset;
    plan.bind_size = req.bind_size.value_or(round_down(
        largest_bind(req.size, plan.allocation_size, req.offset, req.mem_offset), out.limits->bind_alignment));
    out.plan = plan;
    out.violation = check_bind_plan(plan, *out.limits);
    if (out.violation) refuse(*out.violation);
    for (std::size_t i = 0; i < req.devices.size(); ++i) {
        out.bindings.push_back({req.devices[i], location_name(mprops[i].location), plan.allocation_size, false});
    }
    round_trip(log, req, mprops, out);
    out.completed = true;
}

}  // namespace

void run_le_bind(const Driver& driver, const LeBindRequest& request, LeBindOutcome& out) {
    StepLog log(driver.api(), le_diagnoser());
    try {
        run_steps(log, driver, request, out);
    } catch (...) {
        out.completed = false;
        out.steps = log.steps();
        out.undo_failures = log.undo_failures();
        throw;
    }
    out.steps = log.steps();
    out.undo_failures = log.undo_failures();
    out.completed = out.undo_failures.empty();
}

}  // namespace cumemctl::gpu
