// Sharing a pool between two processes, as an IPC-enabled memory resource does: the exporter writes a
// pattern into a block of its pool, exports the pool (a POSIX file descriptor over a Unix socket with
// SCM_RIGHTS, or a fabric handle) and the block's pointer; a second process (the importer, gpu/importer)
// imports both, checks the pattern, frees its import and closes the imported pool, and only then
// reports, so that the exporter frees last. Every step is recorded with its process, result and time.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cuda/driver_api.hpp"
#include "gpu/device/devices.hpp"
#include "gpu/diagnosis/imex_channel_access.hpp"
#include "gpu/importer/importer.hpp"
#include "base/error.hpp"
#include "ipc/child.hpp"
#include "ipc/process.hpp"
#include "ipc/timeout.hpp"
#include "steps/step_log.hpp"

namespace cumemctl::gpu {

// How long the exporter waits for the importer.
inline constexpr ipc::Timeout kPoolImportTimeout{60000};

// What the exporter asks of the check.
struct IpcRequest {
    int device = 0;
    CUmemAllocationHandleType handle_type = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    std::uint64_t size = 0;                                // bytes of the block at `ptr`
    std::uint64_t seed = 0;                                // the pattern's seed
    std::string libcuda;                                   // the driver library the importer loads
    std::string executable = ipc::kSelfExecutable;         // the cumemctl binary the importer runs
    std::string imex_channel_dir = imex::kImexChannelDir;  // where the driver looks for IMEX channels (diagnosis)
    ipc::Timeout timeout = kPoolImportTimeout;             // for each wait on the importer
    // The importer where it was started ahead (start_pool_importer), taken by the check; else the
    // check starts one. With keep_importer it is given back there afterwards, still serving (the
    // device's next IPC check uses it), else ended.
    std::optional<ipc::Child>* importer = nullptr;
    bool keep_importer = false;
};

// Starts the importer of `request` (its device, driver and executable count) ahead of the pool: it
// initialises the driver and retains the device's context, then waits for the exporter's message, so
// that its start-up overlaps what this process does meanwhile. Throws Error (failed) when it cannot
// start. Dropping it unused closes its socket and ends it.
ipc::Child start_pool_importer(const DriverApi& api, const IpcRequest& request);

// The exporter's part, with the current context on the pool's device: writes the pattern, exports
// pool and pointer, starts the importer, hands both over and waits for its report and its exit.
// Appends every step to `out` (the importer's with process "importer"); a failed step ends the check
// and keeps its problem in `out` (a fabric export
// refused for want of an IMEX channel is diagnosed). The importer is gone when this returns.
void run_pool_ipc_check(const DriverApi& api, CUmemoryPool pool, CUdeviceptr ptr, const IpcRequest& request,
                        StepLog& out);

// The importer's side of one request (service "pool-import"), with its start-up done: imports the pool
// and pointer that came with `message`, checks the pattern, frees the imported pointer and closes the
// imported pool; answers with its steps
// (the start-up's first) and the problem of the first failed step. Never throws.
ImporterAnswer answer_pool_import(const ImporterSession& session, const ipc::Request& message);
// The pool import as a service of the importer.
inline constexpr ImporterService kPoolImportService{"pool-import", answer_pool_import};

}  // namespace cumemctl::gpu
