#include "gpu/device/primary_context.hpp"

#include "cuda/driver_call.hpp"

namespace cumemctl::gpu {

PrimaryContext::PrimaryContext(const DriverApi& api, int device) : api_(&api), device_(device) {
    CU_REQUIRE(api, cuDevicePrimaryCtxRelease);
    CU_REQUIRE(api, cuCtxSetCurrent);
    if (api.cuCtxGetCurrent != nullptr) CU_CALL(api, cuCtxGetCurrent, &previous_);
    try {
        CU_CALL(api, cuDevicePrimaryCtxRetain, &context_, device);
    } catch (Error& e) {
        e.problem().device = device;  // the device whose hold gpu::judge_held_problem judges
        throw;
    }
    const CUresult r = api.cuCtxSetCurrent(context_);
    if (r != CUDA_SUCCESS) {
        api.cuDevicePrimaryCtxRelease(device);
        check(api, r, "cuCtxSetCurrent");
    }
}

PrimaryContext::~PrimaryContext() {
    api_->cuCtxSetCurrent(previous_);
    api_->cuDevicePrimaryCtxRelease(device_);
}

DeviceMemory current_device_memory(const DriverApi& api) {
    DeviceMemory m;
    CU_CALL(api, cuMemGetInfo, &m.free, &m.total);
    return m;
}

}  // namespace cumemctl::gpu
