// Runs doctor's checks: the setup checks in order, each selected device's checks on its own thread,
// then the node checks; every check timed, every exception turned into a result.
#pragma once

#include <array>
#include <functional>
#include <string>
#include <vector>

#include "doctor/check.hpp"
#include "doctor/context.hpp"

namespace cumemctl::doctor {

// What a doctor run found.
struct DoctorRun {
    std::vector<CheckResult> results;             // setup checks, then device 0's, device 1's, ..., then node checks
    int device_count = -1;                        // what the driver reports; -1 where it could not say
    std::vector<int> devices;                     // the devices that were examined
    std::vector<gpu::DeviceIdentity> identities;  // their names (UUID, bus id, NVML index), in the same order
    std::string driver_version;                   // NVML's, else the kernel module's ("" where unknown)
    double seconds = 0;                           // the whole run, wall clock
    bool quick = false;                           // --quick: only the checks that need no context
};

// What the command's frame hears of a run, each where given: `measuring` the examined devices before their
// checks when the run measures them (a check that makes a context: not --quick), so that it watches who
// shares them meanwhile; `doing` each check as it starts ("GPU 0: host-bandwidth"), for its progress line.
struct RunHooks {
    std::function<void(const std::vector<int>& devices)> measuring;
    std::function<void(std::string what)> doing;
};

// The names of examined device `ordinal` in `run` (only the ordinal where the rest is unknown).
gpu::DeviceIdentity identity_of(const DoctorRun& run, int ordinal);

// NVML as the caller loads it: a call that waits until NVML has loaded (or failed to) and returns it, or
// null; an empty function where there is none (the memory-health check skips without it).
using NvmlLoad = std::function<const nvml::Library*()>;

// Runs the checks of `options` over a driver that the caller loaded (or failed to load: the driver
// check says why). Throws Error for a malformed device list (usage) or a device that does not exist
// (unavailable); a check never throws out of here.
// `nvml` is called on the run's thread while the setup checks initialise the driver on another (NvmlLoad).
// `progress`, where given, records each finished result and what each check thread waits on (doctor/budget.hpp).
// `hooks`: see RunHooks.
DoctorRun run_doctor(Driver& driver, const DoctorOptions& options, const NvmlLoad& nvml = {},
                     Progress* progress = nullptr, const RunHooks& hooks = {});

// Tells `progress` which checks `options` select, before the run starts (so that a run that never
// starts them can still name them).
void plan_progress(Progress& progress, const DoctorOptions& options);

// How many results have each status, indexed by CheckStatus (pass, warn, fail, skip, busy, timeout).
std::array<int, kStatusCount> count_statuses(const std::vector<CheckResult>& results);
// The whole run's status from those counts: the worst status that any result has (status_severity),
// pass where none is worse (skips say nothing, so a run of skips passes).
CheckStatus run_status(const std::array<int, kStatusCount>& counts);

// The outcome of a check that threw Error: fail, with the error's message, its driver call and a
// remedy (the error's own, else one for the driver's result code).
CheckOutcome outcome_from_error(const Problem& problem);

}  // namespace cumemctl::doctor
