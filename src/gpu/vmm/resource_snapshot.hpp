// What a command holds at one moment: the current device's free memory and this process's open file
// descriptors. Taken before and after an operation (in the same context), equal snapshots show that
// every resource was released.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cuda/driver_api.hpp"

namespace cumemctl {

// Free memory of the current context's device and the open descriptors (less the driver's own
// /dev/nvidia* files, which it opens on first use and keeps).
struct ResourceSnapshot {
    std::uint64_t free_bytes = 0;
    std::map<int, std::string> fds;  // descriptor -> what it refers to
};

// Takes a snapshot; throws Error when cuMemGetInfo fails (a context must be current).
ResourceSnapshot take_snapshot(const DriverApi& api);

// What changed between two snapshots: free memory (after - before) and descriptors opened or closed.
struct ResourceDelta {
    std::int64_t free_bytes = 0;
    std::int64_t fds = 0;
    std::vector<std::string> new_fds;  // "FD -> TARGET" for each descriptor `after` has and `before` had not
    bool balanced() const { return free_bytes == 0 && fds == 0 && new_fds.empty(); }
};
ResourceDelta compare(const ResourceSnapshot& before, const ResourceSnapshot& after);

}  // namespace cumemctl
