// What localization is worth, measured: the pattern of a localized allocation checked from the SMs of
// each locality domain in turn, through a green context per domain (cuDevSmResourceSplit with the
// locality-domain flag, cuGreenCtxCreate), in GB/s local against remote. Where the driver offers no
// such split, one check from the whole device, and the reason.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cuda/driver_api.hpp"
#include "gpu/verify/verify.hpp"

namespace cumemctl::gpu {

// One check of the pattern: from the SMs of `domain` (-1: the whole device).
struct DomainRead {
    int domain = -1;
    unsigned sms = 0;    // the SMs of its green context (0: the whole device)
    bool local = false;  // the memory's own domain
    VerifyResult check;
};

// The reads, and where the split was not offered, why the whole device read instead.
struct LocalityReads {
    int memory_domain = 0;
    std::vector<DomainRead> reads;
    std::string fallback;  // empty where each domain read through its own green context
};

// Checks the pattern at [ptr, ptr + size) from each of `domains` domains of `device`, the memory
// localized to `memory_domain`. The device's primary context must be current on the calling thread;
// it is current again on return. Throws Error for a failed check kernel; mismatches are in the reads.
LocalityReads read_from_each_domain(const DriverApi& api, int device, CUdeviceptr ptr, std::size_t size,
                                    std::uint64_t seed, int memory_domain, int domains);

// The report's form: each read's domain, SMs, local, GB/s and mismatches, the fallback, and
// local / remote where both were read.
nlohmann::json locality_reads_json(const LocalityReads& r);
// "local domain 0 3800.0 GB/s; remote domain 1 2300.0 GB/s (0.61 of local)".
std::string locality_reads_text(const LocalityReads& r);

}  // namespace cumemctl::gpu
