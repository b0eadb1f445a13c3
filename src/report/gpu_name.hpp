// A GPU as a short text names it (doctor's one-line summary, the Slurm and NHC drain reason; doctor's
// peer pairs; fleet's check@GPU), so that `nvidia-smi -i` finds it: nvidia-smi counts as NVML does, in
// PCI order, which is CUDA's only under CUDA_DEVICE_ORDER=PCI_BUS_ID.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace cumemctl {

// "gpu3" for NVML's index 3 (nvidia-smi's); without it the PCI bus id ("00000000:3B:00.0", which
// nvidia-smi -i takes too); else "cuda2" for the CUDA ordinal, said to be CUDA's.
inline std::string gpu_name(std::optional<unsigned> nvml_index, std::string_view pci_bus_id, int cuda_ordinal) {
    if (nvml_index) return fmt::format("gpu{}", *nvml_index);
    if (!pci_bus_id.empty()) return std::string(pci_bus_id);
    return fmt::format("cuda{}", cuda_ordinal);
}

}  // namespace cumemctl
