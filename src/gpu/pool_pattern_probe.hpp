// INTERIM, until src/gpu/verify.cpp lands: a seed-derived pattern over a small probe region at each
// end of a block (at most 64 KiB each), written and read with host copies. To be replaced by
// fill_pattern / check_pattern (kernels over the whole block).
#pragma once

#include <cstdint>

#include "gpu/verify.hpp"

namespace cumemctl {

VerifyResult probe_fill(const DriverApi& api, CUdeviceptr ptr, std::uint64_t size, std::uint64_t seed);
VerifyResult probe_check(const DriverApi& api, CUdeviceptr ptr, std::uint64_t size, std::uint64_t seed);

}  // namespace cumemctl
