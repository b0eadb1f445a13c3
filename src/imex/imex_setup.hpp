// imex-setup's core: read the /proc files, plan every selected channel node, and change what differs.
// The command (cmd/imex_setup.cpp) turns the result into a report.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "imex/channel_apply.hpp"
#include "imex/nvidia_params.hpp"
#include "base/error.hpp"
#include "util/user_group.hpp"

namespace cumemctl::imex {

// What imex-setup is asked to do: the command's options, parsed and resolved.
struct ImexSetupRequest {
    std::string proc_devices = "/proc/devices";
    std::string params = "/proc/driver/nvidia/params";
    std::string dev_root = "/";
    std::string channels = "0";  // a channel list as people type it: "0", "0-3,7", "all"
    std::optional<Owner> owner;  // else the driver's DeviceFileUID and DeviceFileGID
    std::optional<mode_t> mode;  // else 0600 with an owner, else the driver's DeviceFileMode
    bool force = false;          // replace (or remove) device nodes of the wrong type or number
    bool check = false;          // change nothing; anything that differs is a failure
    bool dry_run = false;        // change nothing; say what would change
    bool remove = false;         // remove the channels instead of making them
};

// The channel folder: where it is and what became of it ("created", "unchanged" or "planned").
struct ChannelDirOutcome {
    std::string path;
    Action action = Action::unchanged;
    bool exists = false;
    NodeState state;  // owner and mode where it exists
};

// Where the channels' mode came from: the request's mode, the request's owner (0600), the driver's
// DeviceFileMode, or the driver's default.
enum class ModeSource { mode, owner, device_file_mode, driver_default };

// What imex-setup found and did. The texts of `errors` and `warnings` and each channel's plan detail
// name the request's settings through setting_name.
struct ImexSetupResult {
    int major = 0;                   // of nvidia-caps-imex-channels
    std::uint32_t count = 0;         // ImexChannelCount, or the default
    bool count_from_params = false;  // false: the params file did not say, the default was used
    NvidiaParams params;
    Owner owner;      // the owner every selected channel should have
    mode_t mode = 0;  // and its mode
    ModeSource mode_source = ModeSource::driver_default;
    ChannelDirOutcome directory;
    std::vector<ChannelOutcome> channels;
    std::vector<Problem> warnings;
    std::vector<Problem> errors;
};

// Reads the /proc files, plans every selected channel and, unless checking or dry-running, changes
// the nodes. Throws Error for what stops it before any channel: an unreadable or malformed /proc file
// (exit 3), a channel at or above the count (exit 2), a device root that cannot be used (exit 1, 2 or
// 4), its texts naming the request's settings through setting_name. What happens to each channel (refusals,
// failures, differences when checking) is in the result.
ImexSetupResult run_imex_setup(const ImexSetupRequest& request);

// The name of a mode's source: the setting of the channels' mode or owner (setting_name),
// "DeviceFileMode" or "default".
std::string mode_source_name(ModeSource source);

}  // namespace cumemctl::imex
