// The import check of `create --import-check` and doctor's posix-fd-ipc: a second process (the importer,
// gpu/importer) imports the exported handle, maps it and checks the pattern the first process wrote.
// The handle travels in an ipc::Envelope over the importer's socket (a descriptor with SCM_RIGHTS, or
// the fabric handle in hex) and the importer answers on the same socket with an envelope: its steps,
// its problem and its check.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cuda/driver.hpp"
#include "gpu/importer/importer.hpp"
#include "gpu/vmm/shareable_handle.hpp"
#include "gpu/verify/verify.hpp"
#include "ipc/child.hpp"
#include "ipc/process.hpp"
#include "ipc/timeout.hpp"
#include "steps/step.hpp"

namespace cumemctl::gpu {

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
    int exit_status = -1;               // its exit code; 128 + N when killed by signal N; -1 while it serves on
    std::vector<steps::Step> steps;     // its own steps, in order (process "importer")
    std::optional<VerifyResult> check;  // check_pattern over the imported mapping
    std::optional<Problem> problem;     // why it failed, diagnosed where it could be
    bool ok() const { return !problem && check && check->ok(); }
};

// How the importer of `request` is started (its device as it sees it: child_device / child_env).
ImporterStart import_check_start(const ImportCheckRequest& request);

// The first process's side: sends the handle to the importer (the one in `importer`, else one started
// now) and waits for its answer; then gives the importer back to the slot where it keeps it, else ends
// it (exit_status). Never throws for what goes wrong on the other side: the result's problem says it.
// An importer that does not answer is killed.
ImportCheckResult run_import_check(const ImportCheckRequest& request, const ExportedHandle& handle,
                                   ImporterSlot importer = {});

// The importer's side of one request (service "import-check"), with its start-up done: imports, maps
// and checks the handle that came with `message`, releases everything and answers with its steps (the
// start-up's first), its problem and its check. Never throws. A check that found the pattern wrong
// sets the exit problem too.
ImporterAnswer answer_import_check(const ImporterSession& session, const ipc::Request& message);
// The import check as a service of the importer.
inline constexpr ImporterService kImportCheckService{"import-check", answer_import_check};

}  // namespace cumemctl::gpu
