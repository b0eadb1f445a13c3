// Where a GPU's host buffers belong: its host NUMA node and that node's CPUs, as nvbandwidth and DCGM
// find them. NVML's memory affinity gives the node and its CPU affinity the CPUs; without NVML, the
// driver's CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID gives the node and /sys its CPUs. The copies then run on a
// thread bound to them (util/thread_binding.hpp), so that a GPU of the second socket is not measured
// across the socket link.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cuda/driver_api.hpp"
#include "nvml/nvml.hpp"

namespace cumemctl::gpu {

struct HostPlacement {
    std::optional<int> node;  // the GPU's host NUMA node; absent where neither NVML nor the driver says
    std::vector<int> cpus;    // that node's CPUs; empty where unknown (then only memory is placed)
    std::string source;       // "NVML" or "the driver's HOST_NUMA_ID"
    std::string why_not;      // why `node` is absent
};

// The placement of GPU `ordinal` (NVML's device of `uuid` where `nvml` is loaded and lists it). /sys is
// read under `sysroot`. Never throws.
HostPlacement host_placement(const DriverApi& api, int ordinal, const nvml::Library* nvml, const std::string& uuid,
                             const std::string& sysroot);

}  // namespace cumemctl::gpu
