// A command's errors judged for a GPU held by other processes (gpu/device/held_device, the one
// judgement): an out of memory at a context or an allocation, or an exclusive context refused, while
// NVML lists other processes on the device is exit 3 naming them, not a failure of the node.
#pragma once

#include <functional>
#include <vector>

#include "cuda/driver_api.hpp"
#include "nvml/nvml.hpp"
#include "report/report.hpp"

namespace cumemctl::cmd {

// What a command's failures may show: a held context, and a held device memory where the command allocates
// device memory (host memory, --location host or host-numa, is the host's: no process on the GPU holds it).
enum class HeldScope { contexts_and_device_memory, contexts_only };

// The scope of a command that allocates at a location of `type`.
HeldScope held_scope(CUmemLocationType type);

// Judges the errors of `report` from index `first` on: each with a driver failure, on its device, or on
// the only one of `devices` where it names none (gpu::judge_held_problem, with this process's pid as its
// own), within `scope`. The report's exit code follows its first error's, as Report::add_error decides it.
void judge_held_errors(Report& report, const DriverApi& api, const nvml::Library& nvml, const std::vector<int>& devices,
                       std::size_t first = 0, HeldScope scope = HeldScope::contexts_and_device_memory);

// The frame of a command's work on `devices`. Runs `work`: an Error it throws becomes an error of
// `report`; then every error it added is judged as judge_held_errors does. Where the running command
// measures (command_table: Does::measures), a SharedGpuWatch names in a warning each process that
// shared a GPU while the work ran (not where the work failed: the judgement names holders there). Interrupted and other
// exceptions pass through.
void judging_holds(Report& report, const DriverApi& api, const nvml::Library& nvml, const std::vector<int>& devices,
                   const std::function<void()>& work, HeldScope scope = HeldScope::contexts_and_device_memory);

}  // namespace cumemctl::cmd
