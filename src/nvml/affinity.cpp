#include "nvml/affinity.hpp"

#include <climits>

namespace cumemctl::nvml {
namespace {

// Masks of 4096 CPUs or nodes (the kernel's largest NR_CPUS on x86-64 and arm64 distributions).
constexpr unsigned kMaskWords = 4096 / (sizeof(unsigned long) * CHAR_BIT);

}  // namespace

std::vector<int> mask_bits(const unsigned long* mask, unsigned words) {
    std::vector<int> bits;
    constexpr unsigned kBits = sizeof(unsigned long) * CHAR_BIT;
    for (unsigned w = 0; w < words; ++w) {
        for (unsigned b = 0; b < kBits; ++b) {
            if ((mask[w] >> b) & 1UL) bits.push_back(static_cast<int>(w * kBits + b));
        }
    }
    return bits;
}

Affinity query_affinity(const Library& nvml, Device device) {
    Affinity a;
    if (!nvml.loaded()) {
        a.nodes_why = a.cpus_why = nvml.info().error;
        return a;
    }
    const Api& api = nvml.api();
    unsigned long mask[kMaskWords] = {};
    if (api.device_get_memory_affinity == nullptr) {
        a.nodes_why = "nvmlDeviceGetMemoryAffinity: not in this NVML";
    } else if (const Return r = api.device_get_memory_affinity(device, kMaskWords, mask, kAffinityScopeNode);
               r != kSuccess) {
        a.nodes_why = nvml.describe("nvmlDeviceGetMemoryAffinity", r);
    } else {
        a.nodes = mask_bits(mask, kMaskWords);
    }
    unsigned long cpus[kMaskWords] = {};
    Return r = kErrorFunctionNotFound;
    const char* call = "nvmlDeviceGetCpuAffinityWithinScope";
    if (api.device_get_cpu_affinity_within_scope != nullptr) {
        r = api.device_get_cpu_affinity_within_scope(device, kMaskWords, cpus, kAffinityScopeNode);
    } else if (api.device_get_cpu_affinity != nullptr) {
        call = "nvmlDeviceGetCpuAffinity";
        r = api.device_get_cpu_affinity(device, kMaskWords, cpus);
    }
    if (r == kSuccess) {
        a.cpus = mask_bits(cpus, kMaskWords);
    } else {
        a.cpus_why = r == kErrorFunctionNotFound ? std::string(call) + ": not in this NVML" : nvml.describe(call, r);
    }
    return a;
}

}  // namespace cumemctl::nvml
