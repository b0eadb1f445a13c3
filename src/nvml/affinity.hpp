// What NVML says is near a GPU: the host NUMA nodes whose memory is closest
// (nvmlDeviceGetMemoryAffinity) and the CPUs of its node (nvmlDeviceGetCpuAffinityWithinScope, else the
// older nvmlDeviceGetCpuAffinity), as nvbandwidth and DCGM bind their threads before they allocate.
#pragma once

#include <string>
#include <vector>

#include "nvml/nvml.hpp"

namespace cumemctl::nvml {

// The nodes and CPUs near a device; each empty where NVML did not say, with its words in `*_why`.
struct Affinity {
    std::vector<int> nodes;  // the NUMA nodes nearest the device (usually one)
    std::vector<int> cpus;   // the CPUs of that node
    std::string nodes_why, cpus_why;
};

// The set bits of a mask of `words` unsigned longs, lowest first: NVML's node and CPU sets.
std::vector<int> mask_bits(const unsigned long* mask, unsigned words);

// Asks NVML; never throws.
Affinity query_affinity(const Library& nvml, Device device);

}  // namespace cumemctl::nvml
