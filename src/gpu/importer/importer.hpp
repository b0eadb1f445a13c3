// The second process of every IPC check (create --import-check, create --pool --ipc-check, doctor's
// posix-fd-ipc and ipc-pool): our own executable started with the hidden subcommand __importer and one
// socket (ipc::spawn_connected). It initialises the driver and retains its device's primary context
// first (its start-up, which overlaps the first process's work where it was started ahead), then
// answers requests on the socket one after another (an import check, a pool import: each request
// names its service) until the first process closes its end. The services are a table that the checks
// provide (import_check.hpp's kImportCheckService, pool_ipc.hpp's kPoolImportService) and the hidden
// subcommand passes in (cmd/importer.cpp): the importer knows none of them.
//
// One importer serves every IPC check of a device: the driver makes the contexts of all processes on
// a node largely one at a time (bench/contexts.py, docs/benchmarks.md), so each process with a context
// fewer is time saved for every other.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cuda/driver.hpp"
#include "gpu/device/devices.hpp"
#include "ipc/child.hpp"
#include "ipc/envelope.hpp"
#include "ipc/timeout.hpp"
#include "steps/step.hpp"

namespace cumemctl::gpu {

// How long the importer waits for the next request before it gives up (a failure).
inline constexpr ipc::Timeout kImporterWait{120000};

// What starts an importer: the executable, the driver library it loads and the device as it will see
// it (child_device_view: CUDA_VISIBLE_DEVICES set to the device's UUID).
struct ImporterStart {
    std::string executable = ipc::kSelfExecutable;
    std::string libcuda;
    ChildDeviceView view;
};

// The importer's command line after the executable: the hidden subcommand, the socket at 3, the
// driver and the device.
std::vector<std::string> importer_arguments(const ImporterStart& start);
// Starts an importer. Throws Error (failed) when it cannot start; nothing is left open then. Dropping
// it unused closes its socket, which ends it.
ipc::Child start_importer(const ImporterStart& start);

// Where a check finds an importer started ahead (taken from it; else the check starts one) and
// whether the check gives it back there when it is done (for the device's next check) instead of
// ending it.
struct ImporterSlot {
    std::optional<ipc::Child>* child = nullptr;
    bool keep = false;
};

// The importer in `slot`, taken, or a new one from `start`. Throws Error (failed) when it cannot start.
ipc::Child take_importer(ImporterSlot slot, const ImporterStart& start);
// After a request was answered: gives `child` back to the slot where the slot keeps it (nullopt), else
// closes the socket (no request is left: the importer ends) and waits at most `timeout` for it,
// killing it after that; its wait status then.
std::optional<int> release_importer(ipc::Child child, ImporterSlot slot, ipc::Timeout timeout);

// What the importer's start-up did, which every answer repeats: the steps "init" and "context"
// (process "importer") and the problem where one failed (each request is then answered with it).
struct ImporterSession {
    const DriverApi* api = nullptr;
    int device = 0;  // as the importer sees it
    std::vector<steps::Step> startup;
    std::optional<Problem> problem;
    double receive_seconds = 0;  // how long the importer waited for the request being answered
};

// A service's answer, and the problem that sets the importer's exit code (the first one of all its
// answers), where the service has one.
struct ImporterAnswer {  // NOLINT(bugprone-exception-escape): as ipc::Envelope
    ipc::Envelope envelope;
    std::optional<Problem> exit_problem;
};

// One service of the importer: the name a request gives, and what answers it (in the second process, its
// start-up done or failed: `session` says which). An answer that throws is an internal error.
struct ImporterService {
    const char* name;
    ImporterAnswer (*answer)(const ImporterSession& session, const ipc::Request& request);
};

// The importer's side, in the second process: initialises `driver`, retains the context of `device`,
// then answers each request on `socket` by the service of `services` that it names (a service not
// there is answered with a problem) until the first process closes its end. Returns the exit code's problem: the first
// answer that had one, a request that did not come within `wait`, or a socket that failed (nothing more can be answered
// then); nullopt when all went well.
std::optional<Problem> serve_importer(Driver& driver, int socket, int device, std::span<const ImporterService> services,
                                      ipc::Timeout wait = kImporterWait);

}  // namespace cumemctl::gpu
