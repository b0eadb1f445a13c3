// Turning CUresult values into errors: every failed call carries the call, the code, its name and text.
#pragma once

#include <string>

#include "cuda/driver_api.hpp"
#include "cuda/driver_info.hpp"
#include "base/error.hpp"

namespace cumemctl {

// Describes a failed call with the driver's own name and text for the code (or "CUresult N").
DriverFailure describe_failure(const DriverApi& api, CUresult result, std::string call);

// The exit code a CUresult maps to: NOT_PERMITTED -> permission, NOT_SUPPORTED and friends ->
// unavailable, INVALID_VALUE and the rest -> failed.
ExitCode exit_code_for(CUresult result);

// The CUresult of a failed call, typed: compare it, never the failure's name.
inline CUresult result_of(const DriverFailure& failure) {
    return static_cast<CUresult>(failure.code);
}

// Whether `failure` is a failure of the entry point `entry` (a name the table lacks does not compile).
// Compare a failure's call this way, never with a name spelled out: the name a failure carries is the
// table's own, or one read back from a second process by problem_wire.
bool failed_at(const DriverFailure& failure, EntryPoint entry);

// Whether `failure` is the out of memory of cuMemAddressReserve, which is the process's address space
// running out, not the device's memory (no other process holds it; resetting the GPU changes nothing).
bool address_space_exhausted(const DriverFailure& failure);

// Throws Error carrying the failure when result is not CUDA_SUCCESS.
void check(const DriverApi& api, CUresult result, const char* call);

// Throws Error (unavailable) naming the entry point and the CUDA version the table asks it at when the
// driver lacks it: "this driver has no cuMemPoolTrimTo (it needs CUDA 11.2)". CU_REQUIRE, CU_CALL and
// StepLog::call all say it so.
void require_entry(const void* fn, EntryPoint entry);

}  // namespace cumemctl

// Throws Error (unavailable) when `api` lacks the entry point `fn`, named with its version from the table.
#define CU_REQUIRE(api, fn) ::cumemctl::require_entry(reinterpret_cast<const void*>((api).fn), #fn)

// Calls an optional or required entry point of `api`, throwing Error when it is missing or fails.
// (Each stringifies `fn` itself: an argument passed on to CU_REQUIRE would first be expanded, and cuda.h
// defines some names as macros, cuMemGetInfo as cuMemGetInfo_v2.)
#define CU_CALL(api, fn, ...)                                                 \
    (::cumemctl::require_entry(reinterpret_cast<const void*>((api).fn), #fn), \
     ::cumemctl::check((api), (api).fn(__VA_ARGS__), #fn))
