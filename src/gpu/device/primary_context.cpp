#include "gpu/device/primary_context.hpp"

#include "cuda/driver_call.hpp"

namespace cumemctl::gpu {

namespace {

// The context current on this thread, where the driver can say (none otherwise), read once the driver is
// known to have the calls that end a PrimaryContext.
CUcontext current_context(const DriverApi& api) {
    CU_REQUIRE(api, cuDevicePrimaryCtxRelease);
    CU_REQUIRE(api, cuCtxSetCurrent);
    CUcontext current = nullptr;
    if (api.cuCtxGetCurrent != nullptr) CU_CALL(api, cuCtxGetCurrent, &current);
    return current;
}

// Retains the primary context of `device` and makes it current; a context retained and not made current
// is released again.
OwnedHandle<CUcontext> retain_current(const DriverApi& api, int device) {
    OwnedHandle<CUcontext> context([api = &api, device](CUcontext) { return api->cuDevicePrimaryCtxRelease(device); });
    try {
        CU_CALL(api, cuDevicePrimaryCtxRetain, context.out(), device);
    } catch (Error& e) {
        e.problem().device = device;  // the device whose hold gpu::judge_held_problem judges
        throw;
    }
    CU_CALL(api, cuCtxSetCurrent, context.get());
    return context;
}

}  // namespace

PrimaryContext::PrimaryContext(const DriverApi& api, int device)
    : device_(device),
      previous_(current_context(api)),
      context_(retain_current(api, device)),
      restore_([api = &api, previous = previous_] { api->cuCtxSetCurrent(previous); }) {}

DeviceMemory current_device_memory(const DriverApi& api) {
    DeviceMemory m;
    CU_CALL(api, cuMemGetInfo, &m.free, &m.total);
    return m;
}

}  // namespace cumemctl::gpu
