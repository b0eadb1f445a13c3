// imex-setup --verify: a second process of our own executable (ipc::spawn_connected, the hidden subcommand
// Command::imex_verify), as the channel's user where one is given, proves that fabric handles work
// (gpu/diagnosis/fabric_probe) and answers in an ipc::Envelope: its steps, its problem and what it found.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpu/diagnosis/imex_channel_access.hpp"
#include "ipc/timeout.hpp"
#include "report/report.hpp"
#include "steps/step.hpp"
#include "util/user_group.hpp"

namespace cumemctl::gpu {

// What --verify asks for.
struct FabricVerifyRequest {
    std::string libcuda;       // the driver library (choose_libcuda's answer)
    std::string device = "0";  // --device as typed (one device: an ordinal, a UUID or a bus id), looked up by the child
    std::string imex_channel_dir = imex::kImexChannelDir;  // the folder described when the driver refuses
    std::optional<Owner> as;                    // run the child as this user and group; the caller's own ids otherwise
    ipc::Timeout timeout{120000};               // a driver that hangs longer is killed and reported
    std::string executable = "/proc/self/exe";  // the cumemctl binary to start
};

// What the child found.
struct FabricVerifyResult {
    bool ok = false;
    std::optional<int> device;  // the CUDA ordinal the child found for the request's device
    DriverInfo driver;          // the library the child loaded, and its version
    uid_t uid = 0;              // who the child ran as
    gid_t gid = 0;
    std::uint64_t granularity = 0;   // the size of the fabric allocation it made
    std::vector<steps::Step> steps;  // the child's steps (process "verifier")
    std::optional<Problem> problem;  // why it failed (with the IMEX diagnosis for NOT_PERMITTED)
};

// The command line of the second process, after the executable: the hidden subcommand and its options.
std::vector<std::string> fabric_verify_arguments(const FabricVerifyRequest& request);

// Starts the second process, which drops to `as` (supplementary groups, group, then user) before it
// loads the driver, creates and exports a fabric-handle allocation on the device, releases it and
// answers over a Unix socket. Never throws for what the child found; the child's stdout goes to our
// stderr so that our output stays one document.
FabricVerifyResult verify_fabric_in_child(const FabricVerifyRequest& request);

// The second process's side: drops privileges, loads the driver, runs the probe and sends the
// answer on `socket`. Never throws; returns what it sent.
FabricVerifyResult serve_fabric_verify(const FabricVerifyRequest& request, int socket);

}  // namespace cumemctl::gpu
