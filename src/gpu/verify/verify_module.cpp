#include "gpu/verify/verify_module.hpp"

#include <algorithm>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "cuda/driver_call.hpp"
#include "cuda/owned_handle.hpp"
#include "gpu/verify/memtest_pattern.hpp"
#include "gpu/verify/verify_pattern.hpp"

// The fatbin's first and one-past-last bytes, defined by verify_fatbin.S.
extern "C" const unsigned char cumemctl_verify_fatbin[];
extern "C" const unsigned char cumemctl_verify_fatbin_end[];

namespace cumemctl::gpu {
namespace {

// Loaded kernels by context id; entries of destroyed contexts are never used again (ids are unique).
std::mutex cache_mutex;
std::map<unsigned long long, VerifyKernels> cache;

// The unique id of the current context, put in `ctx`; `ctx` stays null (id 0) when none is current.
unsigned long long current_context_id(const DriverApi& api, CUcontext& ctx) {
    ctx = nullptr;
    CU_CALL(api, cuCtxGetCurrent, &ctx);
    if (ctx == nullptr) return 0;
    unsigned long long id = 0;
    CU_CALL(api, cuCtxGetId, ctx, &id);
    return id;
}

// Adds why a module load failed: the code the fatbin holds against the device and driver.
[[noreturn]] void explain_load_failure(const DriverApi& api, Error error) {
    CUdevice dev = 0;
    int major = 0, minor = 0, driver = 0;
    if (api.cuCtxGetDevice != nullptr && api.cuCtxGetDevice(&dev) == CUDA_SUCCESS) {
        api.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
        api.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    }
    api.cuDriverGetVersion(&driver);
    auto& p = error.problem();
    p.cause = fmt::format(
        "the embedded verify kernels hold {} (built with CUDA {}); the device has compute "
        "capability {}.{} and the driver supports CUDA {}.{}",
        CUMEMCTL_VERIFY_CODE, CUMEMCTL_NVCC_VERSION, major, minor, driver / 1000, driver % 1000 / 10);
    if (p.driver && p.driver->code == CUDA_ERROR_NO_BINARY_FOR_GPU) {
        // Nothing in the fatbin runs on this device (one older than its oldest code): a device this build
        // does not cover, not a broken one.
        p.exit_code = ExitCode::unavailable;
        p.remedy = fmt::format(
            "this cumemctl cannot verify memory on a device of compute capability {}.{}; build it with an "
            "nvcc that has code for it (src/CMakeLists.txt lists the architectures)",
            major, minor);
    } else {
        p.remedy =
            "upgrade the NVIDIA driver to one that supports this CUDA version, or rebuild cumemctl with an "
            "nvcc that targets this device";
    }
    throw std::move(error);
}

// Loads the module into the current context and finds its kernels and the one-wave grid.
VerifyKernels load_kernels(const DriverApi& api) {
    OwnedHandle<CUmodule> module(api.cuModuleUnload);
    try {
        CU_CALL(api, cuModuleLoadData, module.out(), cumemctl_verify_fatbin);
    } catch (Error& e) {
        explain_load_failure(api, std::move(e));
    }
    VerifyKernels k;
    CU_CALL(api, cuModuleGetFunction, &k.fill, module.get(), verify::kFillKernel);
    CU_CALL(api, cuModuleGetFunction, &k.check, module.get(), verify::kCheckKernel);
    CU_CALL(api, cuModuleGetFunction, &k.memtest_fill, module.get(), memtest::kFillKernel);
    CU_CALL(api, cuModuleGetFunction, &k.memtest_check, module.get(), memtest::kCheckKernel);
    CU_CALL(api, cuModuleGetFunction, &k.memtest_check_write, module.get(), memtest::kCheckWriteKernel);
    CUdevice dev = 0;
    CU_CALL(api, cuCtxGetDevice, &dev);
    int sms = 0;
    CU_CALL(api, cuDeviceGetAttribute, &sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
    k.grid = static_cast<unsigned>(sms > 0 ? sms : 1) * verify::kBlocksPerSm;
    k.module = module.release();
    return k;
}

}  // namespace

std::span<const unsigned char> verify_fatbin() {
    return {cumemctl_verify_fatbin, static_cast<std::size_t>(cumemctl_verify_fatbin_end - cumemctl_verify_fatbin)};
}

VerifyKernels verify_kernels(const DriverApi& api) {
    CUcontext ctx = nullptr;
    const unsigned long long id = current_context_id(api, ctx);
    if (ctx == nullptr) {
        throw Error(
            internal_error("cannot verify memory: no CUDA context is current on this thread (make the "
                           "device's context current with cuCtxSetCurrent before verifying)"));
    }
    std::lock_guard<std::mutex> lock(cache_mutex);
    if (const auto it = cache.find(id); it != cache.end()) return it->second;
    const VerifyKernels k = load_kernels(api);
    cache.emplace(id, k);
    return k;
}

void unload_verify_kernels(const DriverApi& api) {
    CUcontext ctx = nullptr;
    const unsigned long long id = current_context_id(api, ctx);
    if (ctx == nullptr) return;
    std::lock_guard<std::mutex> lock(cache_mutex);
    const auto it = cache.find(id);
    if (it == cache.end()) return;
    const CUmodule module = it->second.module;
    cache.erase(it);
    CU_CALL(api, cuModuleUnload, module);
}

void launch_over_words(const DriverApi& api, CUfunction fn, unsigned max_grid, CUstream stream,
                       unsigned long long words, void* args) {
    const unsigned long long per_block = 1ULL * verify::kThreads * verify::kUnroll;
    const auto grid = static_cast<unsigned>(
        std::clamp<unsigned long long>((words + per_block - 1) / per_block, 1, std::max(max_grid, 1U)));
    void* params[] = {args};
    CU_CALL(api, cuLaunchKernel, fn, grid, 1, 1, verify::kThreads, 1, 1, 0, stream, params, nullptr);
}

double elapsed_seconds(const DriverApi& api, CUevent from, CUevent to) {
    float ms = 0;
    CU_CALL(api, cuEventElapsedTime, &ms, from, to);
    return static_cast<double>(ms) / 1e3;
}

}  // namespace cumemctl::gpu
