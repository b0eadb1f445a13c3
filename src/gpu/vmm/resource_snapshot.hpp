// What a command holds at one moment: the current device's free memory and this process's open file
// descriptors. Taken before and after an operation (in the same context). The verdict on leaks rests on
// what this process made and released: its descriptors and the results of its own release calls. The
// device's free memory is device-wide (other processes, and the driver's per-context bookkeeping, move
// it): it is shown, never judged.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cuda/driver_api.hpp"
#include "steps/step.hpp"

namespace cumemctl::gpu {

// Free memory of the current context's device and the open descriptors (less the driver's own
// /dev/nvidia* files, which it opens on first use and keeps).
struct ResourceSnapshot {
    std::uint64_t free_bytes = 0;    // device-wide: shown, never judged
    std::uint64_t lost_handles = 0;  // lost_handle_count(): handles this thread's guards could not give back
    std::map<int, std::string> fds;  // descriptor -> what it refers to
};

// The label of device-wide free memory wherever it is shown (device_free_scope in JSON, tables).
inline constexpr const char* kDeviceFreeScope = "device-wide: moved by other processes; no verdict rests on it";

// Takes a snapshot; throws Error when cuMemGetInfo fails (a context must be current).
ResourceSnapshot take_snapshot(const DriverApi& api);

// What changed between two snapshots: device free memory (after - before; device-wide, shown only) and
// this process's descriptors opened or closed.
struct ResourceDelta {
    std::int64_t free_bytes = 0;  // device-wide: no verdict rests on it
    std::int64_t fds = 0;
    std::vector<std::string> new_fds;  // "FD -> TARGET" for each descriptor `after` has and `before` had not
    std::uint64_t lost_handles = 0;    // handles made in between that a guard could not give back
    // Whether this process gave back what it made: descriptors as before, no handle lost (device free
    // memory plays no part).
    bool balanced() const { return fds == 0 && new_fds.empty() && lost_handles == 0; }
};
ResourceDelta compare(const ResourceSnapshot& before, const ResourceSnapshot& after);

// The release calls of this process's steps (cuMemRelease, cuMemUnmap, cuMemAddressFree, cuMemFree,
// cuMemFreeAsync, cuMemPoolDestroy, and every undo step) that failed, as "CALL (RESULT)". A guard tries
// once more when it goes; whether that gave the handle back is ResourceDelta::lost_handles.
std::vector<std::string> failed_releases(const std::vector<steps::Step>& steps);

}  // namespace cumemctl::gpu
