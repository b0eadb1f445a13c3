// The import check of `create --import-check`: a second process imports the exported handle, maps it
// and checks the pattern the first process wrote. The second process is the cumemctl binary itself,
// started fresh (ipc::Process, so no CUDA state crosses a fork) with a hidden subcommand; the handle
// travels in an ipc::Envelope over a Unix socket (a descriptor with SCM_RIGHTS, or the fabric handle
// in hex) and the second process answers on the same socket with an envelope: its steps, its problem
// and its check.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cuda/driver.hpp"
#include "gpu/vmm/shareable_handle.hpp"
#include "gpu/verify/verify.hpp"
#include "ipc/child.hpp"
#include "ipc/process.hpp"
#include "ipc/timeout.hpp"
#include "steps/step.hpp"

namespace cumemctl::gpu {

// The name of the hidden subcommand the second process runs.
inline constexpr const char* kImportCheckCommand = "internal-import-check";

// The descriptor number on which the second process finds its end of the socket.
inline constexpr int kImportCheckSocketFd = ipc::kChildSocketFd;

// What the second process is told: on its command line where the driver is, which device and the
// handle type (all known before the allocation exists, so that it can start early); with the handle,
// the allocation's size and alignment and the pattern's seed.
struct ImportCheckRequest {
    std::string executable = ipc::kSelfExecutable;  // the cumemctl binary to start
    std::string libcuda;                            // the driver library to load: the one the first process loaded
    int device = 0;
    std::uint64_t size = 0;
    CUmemAllocationHandleType handle_type = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    std::uint64_t seed = 0;
    std::uint64_t alignment = 0;   // of the address range to reserve: the allocation's granularity
    std::string imex_channel_dir;  // for the diagnosis of a refused fabric import
    ipc::Timeout timeout{120000};  // how long either process waits for the other
    // The device as the second process sees it, and the environment that makes it so (gpu/devices'
    // child_device_view: CUDA_VISIBLE_DEVICES set to the device's UUID); by default the same ordinal.
    int child_device = -1;
    std::vector<std::pair<std::string, std::string>> child_env;
};

// What the second process reported, and how it ended.
struct ImportCheckResult {
    int pid = 0;
    int exit_status = -1;               // its exit code; 128 + N when killed by signal N; -1 unknown
    std::vector<steps::Step> steps;     // its own steps, in order (process "importer")
    std::optional<VerifyResult> check;  // check_pattern over the imported mapping
    std::optional<Problem> problem;     // why it failed, diagnosed where it could be
    bool ok() const { return !problem && check && check->ok(); }
};

// The command line of the second process, after the executable: the hidden subcommand and its options.
std::vector<std::string> import_check_arguments(const ImportCheckRequest& request);

// Starts the second process ahead of the handle: it initialises the driver and retains the device's
// context, then waits (request.timeout) for the handle, so that its start-up overlaps what this
// process does meanwhile. Only the command-line fields of `request` count. Throws Error (failed) when
// it cannot start. Dropping the child unused closes its socket and ends it.
ipc::Child start_import_check(const ImportCheckRequest& request);

// The first process's side: sends the handle to the second process (`started`, else one started now)
// and waits for its report. Never throws for what goes wrong on the other side: the result's problem
// says it. The second process is always waited for (killed first if it does not answer in time).
ImportCheckResult run_import_check(const ImportCheckRequest& request, const ExportedHandle& handle,
                                   std::optional<ipc::Child> started = std::nullopt);

// The second process's side: initialises `driver` and retains the device's context, receives the
// handle on `socket`, imports, maps and checks, releases everything, and sends the result back. It
// takes the handle's message even after a failure before it (one request, one answer). Never throws;
// returns what it sent.
ImportCheckResult serve_import_check(Driver& driver, int socket, const ImportCheckRequest& request);

}  // namespace cumemctl::gpu
