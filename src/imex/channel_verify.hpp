// imex-setup --verify: a child process, as the channel's user where one is given, proves that fabric
// handles work (gpu/fabric_probe) and reports back over a pipe.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "report/report.hpp"
#include "util/user_group.hpp"

namespace cumemctl {

// What --verify asks for.
struct FabricVerifyRequest {
    std::string libcuda;      // the driver library (choose_libcuda's answer)
    int device = 0;           // --device
    std::optional<Owner> as;  // run the child as this user and group; the caller's own ids otherwise
    int timeout_ms = 120000;  // a driver that hangs longer is killed and reported
};

// What the child found.
struct FabricVerifyResult {
    bool ok = false;
    DriverInfo driver;                // the library the child loaded, and its version
    uid_t uid = 0;                    // who the child ran as
    gid_t gid = 0;
    std::uint64_t granularity = 0;    // the size of the fabric allocation it made
    std::optional<Problem> problem;   // why it failed (with the IMEX diagnosis for NOT_PERMITTED)
};

// Forks a child that drops to `as` (supplementary groups, group, then user), loads the driver, creates
// and exports a fabric-handle allocation on the device and releases it, and writes what happened to
// a pipe. The caller must not have initialised the driver (a forked child cannot use its parent's)
// and must be single-threaded. Never throws for what the child found; the child's stdout goes to
// stderr so that the parent's output stays one document.
FabricVerifyResult verify_fabric_in_child(const FabricVerifyRequest& request);

}  // namespace cumemctl
