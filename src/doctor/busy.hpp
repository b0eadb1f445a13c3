// Busy or broken, told apart by evidence (judged in the GPU layer, gpu/device/held_device, for every
// command; here in doctor's words): a device check that failed because the device had no memory
// for it (CUDA_ERROR_OUT_OF_MEMORY) or because another process held it in exclusive-process mode
// (CUDA_ERROR_DEVICE_UNAVAILABLE) is judged again with the processes NVML lists on the device. Other
// processes there make it `busy` (a job is using the GPU), or, with --expect-idle, a `fail` that names
// them with how long they have run; no other process, or no NVML to ask, leaves the failure standing
// with what doctor could and could not tell.
#pragma once

#include <cstdint>

#include <optional>
#include <string>

#include "doctor/check.hpp"
#include "doctor/context.hpp"

namespace cumemctl::doctor {

// Whether `outcome` is a failure that other processes on the device may cause: a driver call that
// failed with CUDA_ERROR_OUT_OF_MEMORY or CUDA_ERROR_DEVICE_UNAVAILABLE, in a check of device memory
// (`check`: not host-alloc, whose memory is the host's; not cuMemAddressReserve's, which is this
// process's address space), or a context that failed with CUDA_ERROR_UNKNOWN (the H200's driver says
// so too when the device is full; judge_held_check then asks for NVML's free memory, below kFullDeviceBytes).
bool may_be_held(std::string_view check, const CheckOutcome& outcome);

// Judges `failed` (may_be_held) again with NVML's list of the device's processes, as above. Never throws.
CheckOutcome judge_held_check(const DoctorContext& ctx, DeviceState& device, CheckOutcome failed);

// A figure too slow (`slow`: warn or fail) judged with NVML's list of the device's processes: other
// processes there share the GPU's links and memory, so it is busy, or with --expect-idle a failure
// that names them; none, or no NVML to ask, leave it standing. Never throws.
CheckOutcome judge_shared(const DoctorContext& ctx, DeviceState& device, CheckOutcome slow);

// Whether `outcome` (judge_held_check's, judge_shared's) names process `pid` among the device's holders.
bool names_holder(const CheckOutcome& outcome, unsigned pid);

// How long process `pid` has run, from `proc` (the /proc of the node, under the sysroot): its start
// time in /proc/PID/stat against /proc/uptime. nullopt with `why` where /proc does not show it (in a
// container NVML lists the host's process ids).
std::optional<double> process_age_seconds(const std::string& proc, unsigned pid, std::string* why);

}  // namespace cumemctl::doctor
