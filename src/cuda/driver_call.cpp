#include "cuda/driver_call.hpp"

#include <utility>

#include <fmt/format.h>

namespace cumemctl {

DriverFailure describe_failure(const DriverApi& api, CUresult result, std::string call) {
    DriverFailure f;
    f.call = std::move(call);
    f.code = static_cast<int>(result);
    const char* name = nullptr;
    const char* text = nullptr;
    if (api.cuGetErrorName == nullptr || api.cuGetErrorName(result, &name) != CUDA_SUCCESS || name == nullptr) {
        name = nullptr;
    }
    if (api.cuGetErrorString == nullptr || api.cuGetErrorString(result, &text) != CUDA_SUCCESS || text == nullptr) {
        text = nullptr;
    }
    f.name = name != nullptr ? name : fmt::format("CUresult {}", f.code);
    f.text = text != nullptr ? text : "unknown error";
    return f;
}

bool failed_at(const DriverFailure& failure, EntryPoint entry) {
    return failure.call == entry.name;
}

bool address_space_exhausted(const DriverFailure& failure) {
    return result_of(failure) == CUDA_ERROR_OUT_OF_MEMORY && failed_at(failure, "cuMemAddressReserve");
}

ExitCode exit_code_for(CUresult result) {
    switch (result) {
        case CUDA_SUCCESS:
            return ExitCode::ok;
        case CUDA_ERROR_NOT_PERMITTED:
            return ExitCode::permission;
        case CUDA_ERROR_NOT_SUPPORTED:
        case CUDA_ERROR_NO_DEVICE:
        case CUDA_ERROR_NOT_INITIALIZED:
        case CUDA_ERROR_DEINITIALIZED:
        case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
        case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
        case CUDA_ERROR_INVALID_DEVICE:
        case CUDA_ERROR_SYSTEM_NOT_READY:
            return ExitCode::unavailable;
        default:
            return ExitCode::failed;
    }
}

void check(const DriverApi& api, CUresult result, const char* call) {
    if (result == CUDA_SUCCESS) return;
    Problem p;
    p.driver = describe_failure(api, result, call);
    p.exit_code = exit_code_for(result);
    p.message = fmt::format("{} failed: {} ({})", call, p.driver->name, p.driver->text);
    throw Error(std::move(p));
}

void require_entry(const void* fn, EntryPoint entry) {
    if (fn != nullptr) return;
    throw Error(ExitCode::unavailable,
                fmt::format("this driver has no {} (it needs CUDA {})", entry.name, cuda_version_string(entry.version)),
                "upgrade the NVIDIA driver to one that provides it");
}

}  // namespace cumemctl
