#include "gpu/pool_pattern_probe.hpp"

#include <algorithm>
#include <vector>

#include "cuda/driver_call.hpp"

namespace cumemctl {
namespace {

constexpr std::uint64_t kProbe = 64 * 1024;

std::vector<std::uint64_t> words(std::uint64_t offset, std::uint64_t n, std::uint64_t seed) {
    std::vector<std::uint64_t> w(n / 8);
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = (offset + i * 8) * 0x9E3779B97F4A7C15ULL ^ seed;
    return w;
}

template <typename Fn>
void each_region(std::uint64_t size, Fn&& fn) {
    const std::uint64_t n = std::min(kProbe, size) / 8 * 8;
    fn(0, n);
    if (size >= 2 * kProbe) fn((size - n) / 8 * 8, n);
}

}  // namespace

VerifyResult probe_fill(const DriverApi& api, CUdeviceptr ptr, std::uint64_t size, std::uint64_t seed) {
    VerifyResult r;
    each_region(size, [&](std::uint64_t off, std::uint64_t n) {
        const auto w = words(off, n, seed);
        CU_CALL(api, cuMemcpyHtoD, ptr + off, w.data(), n);
        r.bytes += n;
    });
    return r;
}

VerifyResult probe_check(const DriverApi& api, CUdeviceptr ptr, std::uint64_t size, std::uint64_t seed) {
    VerifyResult r;
    each_region(size, [&](std::uint64_t off, std::uint64_t n) {
        const auto want = words(off, n, seed);
        std::vector<std::uint64_t> got(want.size());
        CU_CALL(api, cuMemcpyDtoH, got.data(), ptr + off, n);
        for (std::size_t i = 0; i < got.size(); ++i) {
            if (got[i] == want[i]) continue;
            if (r.mismatches++ == 0) r.first_mismatch_offset = off + i * 8;
        }
        r.bytes += n;
    });
    return r;
}

}  // namespace cumemctl
