#include "gpu/bandwidth/host_placement.hpp"

#include <fmt/format.h>

#include "gpu/device/devices.hpp"
#include "nvml/affinity.hpp"
#include "util/thread_binding.hpp"

namespace cumemctl::gpu {

HostPlacement host_placement(const DriverApi& api, int ordinal, const nvml::Library* nvml, const std::string& uuid,
                             const std::string& sysroot) {
    HostPlacement p;
    std::string nvml_why;
    if (const auto handle = nvml::find_device(nvml, uuid, nvml_why)) {
        const nvml::Affinity a = nvml::query_affinity(*nvml, *handle);
        if (!a.nodes.empty()) p.node = a.nodes.front(), p.source = "NVML";
        p.cpus = a.cpus;
        if (a.nodes.empty()) nvml_why = a.nodes_why;
    }
    if (!p.node) {
        const int own = device_attribute(api, ordinal, CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID).value_or(-1);
        if (own >= 0) {
            p.node = own, p.source = "the driver's HOST_NUMA_ID";
        } else {
            p.why_not = fmt::format("neither NVML ({}) nor the driver's HOST_NUMA_ID names the GPU's NUMA node",
                                    nvml_why.empty() ? "no answer" : nvml_why);
        }
    }
    if (p.node && p.cpus.empty()) p.cpus = node_cpus(sysroot, *p.node);
    return p;
}

}  // namespace cumemctl::gpu
