// The GPUs the NVIDIA kernel module lists: one folder per GPU under /proc/driver/nvidia/gpus (under the
// sysroot), named by its PCI bus id, whose `information` file says its UUID. Read without the driver
// library or NVML, so that doctor knows its GPUs before either has started (the inventory check's third
// source, and the UUIDs its early importers are started for).
#pragma once

#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "doctor/context.hpp"

namespace cumemctl::doctor {

struct KernelGpu {
    std::string bus;   // the folder's name ("0000:19:00.0")
    std::string uuid;  // "GPU-5f0a6b1c-2d3e-4f50-6172-839405a6b7c8" as the file writes it; "" where it says none
};

// The kernel's GPUs in the folder's order, at most `most` of them (the folder is a system root's under
// --sysroot, which someone may have filled); nullopt where the folder cannot be read. A UUID that is not
// "GPU-" and 36 characters of hex digits and dashes is left empty.
std::optional<std::vector<KernelGpu>> kernel_gpus(const DoctorContext& ctx,
                                                  std::size_t most = std::numeric_limits<std::size_t>::max());

}  // namespace cumemctl::doctor
