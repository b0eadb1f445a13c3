#include "gpu/fabric_probe.hpp"

#include <fmt/format.h>

#include "cuda/driver_call.hpp"
#include "gpu/devices.hpp"

namespace cumemctl {
namespace {

// Releases an allocation handle and a retained primary context, whatever happens in between.
struct ProbeResources {
    const DriverApi& api;
    CUdevice device = 0;
    CUmemGenericAllocationHandle handle = 0;
    bool context = false;

    ~ProbeResources() {
        if (handle != 0 && api.cuMemRelease != nullptr) api.cuMemRelease(handle);
        if (context) {
            api.cuCtxSetCurrent(nullptr);
            api.cuDevicePrimaryCtxRelease(device);
        }
    }

    // Makes the device's primary context current (for drivers that want one for cuMemCreate).
    void use_primary_context() {
        require_entry(reinterpret_cast<const void*>(api.cuDevicePrimaryCtxRetain), "cuDevicePrimaryCtxRetain", 7000);
        require_entry(reinterpret_cast<const void*>(api.cuDevicePrimaryCtxRelease), "cuDevicePrimaryCtxRelease", 11000);
        require_entry(reinterpret_cast<const void*>(api.cuCtxSetCurrent), "cuCtxSetCurrent", 4000);
        CUcontext ctx = nullptr;
        check(api, api.cuDevicePrimaryCtxRetain(&ctx, device), "cuDevicePrimaryCtxRetain");
        context = true;
        check(api, api.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    }
};

CUmemAllocationProp fabric_prop(CUdevice device) {
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_FABRIC;
    return prop;
}

void probe_steps(ProbeResources& res, FabricProbe& result) {
    const DriverApi& api = res.api;
    const CUmemAllocationProp prop = fabric_prop(res.device);
    std::size_t granularity = 0;
    CU_CALL(api, cuMemGetAllocationGranularity, &granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    result.granularity = granularity;
    require_entry(reinterpret_cast<const void*>(api.cuMemCreate), "cuMemCreate", 10020);
    CUresult r = api.cuMemCreate(&res.handle, granularity, &prop, 0);
    if (r == CUDA_ERROR_INVALID_CONTEXT) {
        res.handle = 0;
        res.use_primary_context();
        result.needed_context = true;
        r = api.cuMemCreate(&res.handle, granularity, &prop, 0);
    }
    if (r != CUDA_SUCCESS) res.handle = 0;
    check(api, r, "cuMemCreate");
    CUmemFabricHandle fabric{};
    CU_CALL(api, cuMemExportToShareableHandle, &fabric, res.handle, CU_MEM_HANDLE_TYPE_FABRIC, 0);
    const CUmemGenericAllocationHandle handle = res.handle;
    res.handle = 0;
    CU_CALL(api, cuMemRelease, handle);
}

}  // namespace

FabricProbe probe_fabric_handle(const DriverApi& api, int device) {
    FabricProbe result;
    result.device = device;
    ProbeResources res{api};
    CU_CALL(api, cuDeviceGet, &res.device, device);
    const std::optional<int> fabric = device_attribute(api, res.device, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED);
    if (fabric && *fabric == 0) {
        Problem p;
        p.exit_code = ExitCode::unavailable;
        p.device = device;
        p.message = fmt::format("device {} does not support fabric handles", device);
        p.cause = "CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED is 0 on this device and driver";
        p.remedy = "fabric handles (and IMEX channels) need a device and driver that support them, such as an "
                   "NVLink-connected Hopper or Blackwell system on driver 530 or later";
        throw Error(std::move(p));
    }
    try {
        probe_steps(res, result);
    } catch (Error& e) {
        e.problem().device = device;
        diagnose_fabric_failure(e.problem());
        throw;
    }
    return result;
}

void diagnose_fabric_failure(Problem& problem) {
    if (!problem.driver) return;
    switch (problem.driver->code) {
        case CUDA_ERROR_NOT_PERMITTED:
            problem.cause = "no usable IMEX channel: the driver allows fabric handles only to a process that can "
                            "open a node under /dev/nvidia-caps-imex-channels, and this one can open none";
            problem.remedy = "as root, make a channel: 'cumemctl imex-setup' (channel0, for every user) or "
                             "'cumemctl imex-setup --owner USER --channel N' (one channel per user); "
                             "then 'cumemctl imex-setup --check --verify'";
            break;
        case CUDA_ERROR_NOT_SUPPORTED:
            problem.cause = "this device or driver does not support fabric handles";
            problem.remedy = "use a device and driver with fabric handle support (see 'cumemctl devices')";
            break;
        case CUDA_ERROR_SYSTEM_NOT_READY:
        case CUDA_ERROR_ILLEGAL_STATE:
            problem.cause = "the fabric software is not initialised or not running";
            problem.remedy = "check the NVIDIA fabric manager and IMEX services (systemctl status nvidia-imex)";
            break;
        default: break;
    }
}

}  // namespace cumemctl
