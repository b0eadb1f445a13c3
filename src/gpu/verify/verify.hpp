// Writing and checking a pattern over device-accessible memory on the device itself, at close to the
// memory bandwidth: small kernels built with nvcc and embedded in the binary, launched through the
// driver seam. Nothing is copied to the host but a count of mismatches. docs/verify.md has the method.
//
// Every function needs a current context on the calling thread (the caller makes the device's context
// current; an Error says so when none is) and a range that this device may read and write, starting at
// a 16-byte aligned address; any size of at least 1 byte (a size that is not a multiple of 16 ends in
// tail bytes, handled too). Each call makes and releases its own stream, events and a 16-byte counter
// buffer; the kernels' module stays loaded in the context (verify_module.hpp). Safe to call from
// several threads, each with its own context current.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "cuda/driver_api.hpp"
#include "base/error.hpp"

namespace cumemctl::gpu {

// What a fill or check did: bytes covered, mismatching 16-byte words and the first one's offset,
// and the time and bandwidth of each pass (bytes written, or bytes read, per second).
struct VerifyResult {
    std::uint64_t bytes = 0;
    std::uint64_t mismatches = 0;
    std::uint64_t first_mismatch_offset = 0;  // meaningful when mismatches > 0
    double fill_seconds = 0;
    double check_seconds = 0;
    double fill_gbps = 0;  // 10^9 bytes per second
    double check_gbps = 0;
    bool ok() const { return mismatches == 0; }
};

// Writes the pattern for `seed` over [ptr, ptr + size) with the device of the current context, then
// checks every byte. The pattern is derived from each word's offset and the seed, so a second process
// that maps the same memory elsewhere can check it with check_pattern. Mismatches are a result, not an
// error; a driver failure throws Error (CUDA_ERROR_ILLEGAL_ADDRESS, with a cause, when the device may
// not touch the whole range).
VerifyResult fill_and_check(const DriverApi& api, CUdeviceptr ptr, std::size_t size, std::uint64_t seed);

// Writes the pattern only.
VerifyResult fill_pattern(const DriverApi& api, CUdeviceptr ptr, std::size_t size, std::uint64_t seed);

// Checks the pattern only.
VerifyResult check_pattern(const DriverApi& api, CUdeviceptr ptr, std::size_t size, std::uint64_t seed);

// A fresh seed for the pattern.
std::uint64_t random_pattern_seed();

// The failure a check that found mismatches reports (exit 1): `what` found N of M words wrong, the
// first at byte offset X, with the remedy.
Error pattern_mismatch(const std::string& what, const VerifyResult& v);

}  // namespace cumemctl::gpu
