// The processes that hold a device's memory, as NVML lists them (pid, name, memory used): the evidence
// that tells a device busy with someone's job from a broken one, and what a command that must not run
// beside others names when it refuses. Never throws; where NVML cannot list, the reason.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "nvml/nvml.hpp"

namespace cumemctl::nvml {

// One compute process on a device (base/error.hpp: a problem names them too).
using GpuProcess = cumemctl::GpuProcess;

// A device's compute processes, or why NVML gave none: `listed` false with `why` set when the entry
// point is missing or failed (an empty list with `listed` true means no process holds the device).
struct ProcessList {
    bool listed = false;
    std::vector<GpuProcess> processes;  // in NVML's order
    std::string call;                   // the entry point that answered (or failed)
    std::string why;
};

// Lists the compute processes of `device`: nvmlDeviceGetComputeRunningProcesses_v3 where the library has
// it, else the v1 entry point (whose records lack the MIG instance ids); the names from
// nvmlSystemGetProcessName where it answers.
ProcessList list_processes(const Library& nvml, Device device);

// The memory NVML counts for `processes`, where it gives a figure (those without one add nothing).
std::uint64_t memory_used(const std::vector<GpuProcess>& processes);

// "pid 4242 (python3) using 140.9 GiB": one process in a sentence; the name's last path component.
std::string describe(const GpuProcess& process);

}  // namespace cumemctl::nvml
