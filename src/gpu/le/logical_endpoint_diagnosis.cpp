#include "gpu/le/logical_endpoint_diagnosis.hpp"

#include <string>
#include <utility>

#include <fmt/format.h>

#include "base/setting.hpp"
#include "cuda/driver_call.hpp"
#include "gpu/diagnosis/imex_channel_access.hpp"

namespace cumemctl::gpu {

namespace {

// A cause and what to do about it; empty where the flow has nothing to add to the driver's words.
struct Explanation {
    std::string cause;
    std::string remedy;
};

bool is_memory_call(const DriverFailure& f) {
    return failed_at(f, "cuMemGetAllocationGranularity") || failed_at(f, "cuMemCreate");
}

bool is_bind_call(const DriverFailure& f) {
    return failed_at(f, "cuLogicalEndpointBindMem") || failed_at(f, "cuLogicalEndpointBindAddr");
}

// OUT_OF_MEMORY differs by call: from a bind it is bind resources, from a reservation ids, else memory.
Explanation out_of_memory(const DriverFailure& f) {
    if (is_bind_call(f)) {
        return {
            "the driver has no bind resources left on this device (from a bind, OUT_OF_MEMORY means bind "
            "resources, not memory)",
            "unbind or destroy other logical endpoints on this device, or bind fewer, larger ranges"};
    }
    if (failed_at(f, "cuLogicalEndpointIdReserve") || failed_at(f, "cuLogicalEndpointCreate")) {
        return {"the driver has no logical endpoint ids or endpoint resources left",
                "release endpoint ids and destroy endpoints that this or other processes hold"};
    }
    return {"the device has too little free memory for this allocation",
            fmt::format("use a smaller {}, or free memory on the device", setting_name(Setting::endpoint_size))};
}

Explanation illegal_state(const DriverFailure& f) {
    if (failed_at(f, "cuLogicalEndpointQuery")) {
        return {
            "construction failed: the driver found no device on which this endpoint can be accessed, or the "
            "devices of a multicast team are not in one NVLink clique",
            "check the system configuration (NVLink, fabric state in 'nvidia-smi -q') and that the driver "
            "daemons (nvidia-fabricmanager, nvidia-imex) run; build teams from one clique"};
    }
    return {"the system configuration does not allow this operation (CUDA_ERROR_ILLEGAL_STATE)",
            "check the system configuration and that the driver daemons (nvidia-fabricmanager, nvidia-imex) run"};
}

Explanation not_supported(const DriverFailure& f) {
    if (is_memory_call(f)) {
        return {"the device does not offer memory of this location and handle type for cuMemCreate",
                fmt::format("try {} device, or {} none", setting_name(Setting::location),
                            setting_name(Setting::handle_type))};
    }
    return {"this device or driver does not support the requested kind of logical endpoint or memory",
            fmt::format("check 'cumemctl devices' for the logical endpoint attributes; leave out {}, {} fabric or {} "
                        "host-numa to find which one it is",
                        setting_name(Setting::counted_ops), setting_name(Setting::handle_type),
                        setting_name(Setting::location))};
}

Explanation invalid_value(const DriverFailure& f) {
    if (is_memory_call(f)) {
        return {"the driver does not accept memory of this location and handle type (no granularity for it)",
                fmt::format("try {} device, or {} none; 'cumemctl devices' shows what each device offers",
                            setting_name(Setting::location), setting_name(Setting::handle_type))};
    }
    if (is_bind_call(f)) {
        return {
            "the driver refused the binding; cumemctl checked alignment, sizes, the device and host-NUMA rules "
            "first, so the cause is one it cannot check (for example memory the endpoint may not bind)",
            fmt::format("compare the request with the limits ({} shows them)", setting_name(Setting::limits_only))};
    }
    return {};
}

Explanation explain(const DriverFailure& f) {
    switch (result_of(f)) {
        case CUDA_ERROR_OUT_OF_MEMORY:
            return out_of_memory(f);
        case CUDA_ERROR_SYSTEM_NOT_READY:
            return {"the fabric software is not initialised or not running (CUDA_ERROR_SYSTEM_NOT_READY)",
                    "start the fabric software (nvidia-fabricmanager, and nvidia-imex on multi-node NVLink systems) "
                    "and wait until 'nvidia-smi -q' shows the GPU fabric state as Completed"};
        case CUDA_ERROR_ILLEGAL_STATE:
            return illegal_state(f);
        case CUDA_ERROR_NOT_PERMITTED:
            return {
                "fabric handles need an IMEX channel this process can open, and there is none",
                fmt::format("{}; or use {} none", read_channel_access().remedy(), setting_name(Setting::handle_type))};
        case CUDA_ERROR_NOT_SUPPORTED:
            return not_supported(f);
        case CUDA_ERROR_INVALID_VALUE:
            return invalid_value(f);
        default:
            return {};
    }
}

}  // namespace

void explain_le_failure(Problem& p, const DriverFailure& failure) {
    Explanation e = explain(failure);
    if (e.cause.empty()) return;
    p.cause = std::move(e.cause);
    p.remedy = std::move(e.remedy);
}

steps::Diagnoser le_diagnoser() {
    return [](Problem& problem) {
        if (problem.driver) explain_le_failure(problem, *problem.driver);
    };
}

}  // namespace cumemctl::gpu
