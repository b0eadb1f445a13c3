#pragma once
// Which of a profile's GPUs this process may open, as the real driver and NVML decide it: a GPU whose
// device node (/dev/nvidiaN, N its NVML index) the process is not allowed to open is not there for
// either of them. Slurm's ConstrainDevices=yes works this way: the step's device cgroup refuses the
// nodes of the GPUs it was not given (open gives EPERM), and the step's CUDA and nvidia-smi show only
// the GPUs it was given, renumbered from 0.
//
// FAKECUDA_DEVICE_NODES is the nodes' path with %d for N (e.g. /tmp/x/dev/nvidia%d); unset, every GPU
// is there. The nodes are stand-ins that no driver serves, so an allowed open fails with ENXIO: only
// EPERM (a device cgroup's refusal) and EACCES (the node's mode) take a GPU away. The fake NVML lists a
// profile's devices in the reverse of the profile's order (fake_nvml.cpp), so the profile's device i of n
// has NVML index n - 1 - i; both fakes use this one rule (header-only: they are separate libraries).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace fake {

// Whether the GPU of NVML index `nvml_index` can be opened (always, without FAKECUDA_DEVICE_NODES).
inline bool device_node_allowed(int nvml_index) {
    const char* pattern = std::getenv("FAKECUDA_DEVICE_NODES");
    if (pattern == nullptr || *pattern == '\0') return true;
    std::string path = pattern;
    const auto at = path.find("%d");
    if (at != std::string::npos) path.replace(at, 2, std::to_string(nvml_index));
    const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd >= 0) {
        close(fd);
        return true;
    }
    return errno != EPERM && errno != EACCES;
}

}  // namespace fake
