#include "gpu/le/logical_endpoint_diagnosis.hpp"

#include <utility>

#include <fmt/format.h>

namespace cumemctl::gpu {
namespace {

bool is_memory(const std::string& call) {
    return call == "cuMemGetAllocationGranularity" || call == "cuMemCreate";
}

bool is_bind(const std::string& call) {
    return call == "cuLogicalEndpointBindMem" || call == "cuLogicalEndpointBindAddr";
}

}  // namespace

void explain_le_failure(Problem& p, CUresult result, const std::string& call, const LeNames& names) {
    const auto set = [](Problem& problem, std::string cause, std::string remedy) {
        problem.cause = std::move(cause);
        problem.remedy = std::move(remedy);
    };
    constexpr const char* kFabricSoftware =
        "start the fabric software (nvidia-fabricmanager, and nvidia-imex on multi-node NVLink systems) and wait "
        "until 'nvidia-smi -q' shows the GPU fabric state as Completed";
    switch (result) {
        case CUDA_ERROR_OUT_OF_MEMORY:
            if (is_bind(call)) {
                set(p,
                    "the driver has no bind resources left on this device (from a bind, OUT_OF_MEMORY means bind "
                    "resources, not memory)",
                    "unbind or destroy other logical endpoints on this device, or bind fewer, larger ranges");
            } else if (call == "cuLogicalEndpointIdReserve" || call == "cuLogicalEndpointCreate") {
                set(p, "the driver has no logical endpoint ids or endpoint resources left",
                    "release endpoint ids and destroy endpoints that this or other processes hold");
            } else {
                set(p, "the device has too little free memory for this allocation",
                    fmt::format("use a smaller {}, or free memory on the device", names.endpoint_size));
            }
            return;
        case CUDA_ERROR_SYSTEM_NOT_READY:
            set(p, "the fabric software is not initialised or not running (CUDA_ERROR_SYSTEM_NOT_READY)",
                kFabricSoftware);
            return;
        case CUDA_ERROR_ILLEGAL_STATE:
            if (call == "cuLogicalEndpointQuery") {
                set(p,
                    "construction failed: the driver found no device on which this endpoint can be accessed, or "
                    "the devices of a multicast team are not in one NVLink clique",
                    "check the system configuration (NVLink, fabric state in 'nvidia-smi -q') and that the driver "
                    "daemons (nvidia-fabricmanager, nvidia-imex) run; build teams from one clique");
            } else {
                set(p, "the system configuration does not allow this operation (CUDA_ERROR_ILLEGAL_STATE)",
                    "check the system configuration and that the driver daemons (nvidia-fabricmanager, nvidia-imex) "
                    "run");
            }
            return;
        case CUDA_ERROR_NOT_PERMITTED:
            set(p, "fabric handles need an IMEX channel this process can open, and there is none",
                fmt::format(
                    "create an IMEX channel node (cumemctl imex-setup, or /dev/nvidia-caps-imex-channels/channel0), "
                    "or use {} none",
                    names.handle_type));
            return;
        case CUDA_ERROR_NOT_SUPPORTED:
            if (is_memory(call)) {
                set(p, "the device does not offer memory of this location and handle type for cuMemCreate",
                    fmt::format("try {} device, or {} none", names.location, names.handle_type));
                return;
            }
            set(p, "this device or driver does not support the requested kind of logical endpoint or memory",
                fmt::format(
                    "check 'cumemctl devices' for the logical endpoint attributes; leave out {}, {} fabric or {} "
                    "host-numa to find which one it is",
                    names.counted_ops, names.handle_type, names.location));
            return;
        case CUDA_ERROR_INVALID_VALUE:
            if (is_memory(call)) {
                set(p, "the driver does not accept memory of this location and handle type (no granularity for it)",
                    fmt::format("try {} device, or {} none; 'cumemctl devices' shows what each device offers",
                                names.location, names.handle_type));
            } else if (is_bind(call)) {
                set(p,
                    "the driver refused the binding; cumemctl checked alignment, sizes, the device and host-NUMA "
                    "rules first, so the cause is one it cannot check (for example memory the endpoint may not bind)",
                    fmt::format("compare the request with the limits ({} shows them)", names.limits_only));
            }
            return;
        default:
            return;
    }
}

steps::Diagnoser le_diagnoser(LeNames names) {
    return [names = std::move(names)](Problem& problem) {
        if (problem.driver)
            explain_le_failure(problem, static_cast<CUresult>(problem.driver->code), problem.driver->call, names);
    };
}

}  // namespace cumemctl::gpu
