// Turning CUresult values into errors: every failed call carries the call, the code, its name and text.
#pragma once

#include <string>

#include "cuda/driver_api.hpp"
#include "base/error.hpp"

namespace cumemctl {

// Describes a failed call with the driver's own name and text for the code (or "CUresult N").
DriverFailure describe_failure(const DriverApi& api, CUresult result, std::string call);

// The exit code a CUresult maps to: NOT_PERMITTED -> permission, NOT_SUPPORTED and friends ->
// unavailable, INVALID_VALUE and the rest -> failed.
ExitCode exit_code_for(CUresult result);

// Throws Error carrying the failure when result is not CUDA_SUCCESS.
void check(const DriverApi& api, CUresult result, const char* call);

// Throws Error (unavailable) naming the entry point when the driver lacks it.
void require_entry(const void* fn, const char* name, int version);

}  // namespace cumemctl

// Calls an optional or required entry point of `api`, throwing Error when it is missing or fails.
#define CU_CALL(api, fn, ...)                                                    \
    (::cumemctl::require_entry(reinterpret_cast<const void*>((api).fn), #fn, 0), \
     ::cumemctl::check((api), (api).fn(__VA_ARGS__), #fn))
