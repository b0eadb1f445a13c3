#include "gpu/vmm/import_check.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include "gpu/vmm/device_mapping.hpp"
#include "gpu/diagnosis/diagnosis.hpp"
#include "gpu/device/memory_props.hpp"
#include "gpu/device/primary_context.hpp"
#include "gpu/verify/verify_json.hpp"
#include "ipc/child.hpp"
#include "ipc/envelope.hpp"
#include "ipc/hex.hpp"
#include "report/report.hpp"
#include "steps/step_log.hpp"
#include "util/unix_socket.hpp"

namespace cumemctl::gpu {
namespace {

// The handle as the first process sends it: the descriptor alongside, or the fabric handle in hex; with
// the allocation's size, alignment and the pattern's seed (known only now: the second process may have
// started before the allocation was made).
void send_handle(int socket, const ImportCheckRequest& request, const ExportedHandle& handle) {
    ipc::Envelope e;
    e.result = {{"size", request.size}, {"alignment", request.alignment}, {"seed", request.seed}};
    if (handle.type == CU_MEM_HANDLE_TYPE_FABRIC) {
        e.result["fabric_handle"] = ipc::to_hex(handle.fabric.data, sizeof handle.fabric.data);
        ipc::send_envelope(socket, e);
    } else {
        e.result["posix_fd"] = true;
        ipc::send_envelope(socket, e, handle.fd.get());
    }
}

// The fabric handle in a received request; throws Error when it is not 64 bytes in hex.
CUmemFabricHandle fabric_of(const ipc::Envelope& message) {
    CUmemFabricHandle h{};
    const std::string hex = message.result.is_object() ? message.result.value("fabric_handle", "") : "";
    if (hex.size() != 2 * sizeof h.data) {
        throw Error(ExitCode::failed, fmt::format("the fabric handle that arrived has {} hex digits, not {}",
                                                  hex.size(), 2 * sizeof h.data));
    }
    ipc::from_hex(hex, h.data, sizeof h.data);
    return h;
}

AllocationHandle import_received(const DriverApi& api, const ipc::Envelope& message, CUmemAllocationHandleType type) {
    if (type == CU_MEM_HANDLE_TYPE_FABRIC) return import_fabric(api, fabric_of(message));
    if (!message.fd.valid()) throw Error(ExitCode::failed, "no file descriptor arrived with the handle message");
    return import_posix_fd(api, message.fd.get());
}

// The second process's work: the driver and the device's context first (its start-up, which overlaps
// the first process's work when it was started early), then the handle: import, map, check, release.
// `receiving` is set once it waits for the handle (so that a failure before that still takes it).
void import_map_check(Driver& driver, int socket, ImportCheckRequest request, StepLog& log, bool& receiving,
                      ImportCheckResult& r) {
    log.time("init", "cuInit", [&] { driver.init(); });
    const DriverApi& api = driver.api();
    std::optional<PrimaryContext> ctx;
    log.time("context", "cuDevicePrimaryCtxRetain", [&] { ctx.emplace(api, request.device); });
    receiving = true;
    const ipc::Envelope message =
        log.time("receive", "recvmsg", [&] { return ipc::receive_envelope(socket, request.timeout); });
    if (message.result.is_object()) {
        request.size = message.result.value("size", request.size);
        request.alignment = message.result.value("alignment", request.alignment);
        request.seed = message.result.value("seed", request.seed);
    }
    AllocationHandle handle = log.time("import", "cuMemImportFromShareableHandle",
                                       [&] { return import_received(api, message, request.handle_type); });
    DeviceMapping mapping(api, handle.get(), request.size, request.alignment, {request.device}, log);
    r.check = log.time("check", "check_pattern",
                       [&] { return check_pattern(api, mapping.address(), request.size, request.seed); });
    mapping.release(log);
    log.time("release", "cuMemRelease", [&] { handle.release(); });
}

Problem internal_problem(const std::exception& e) {
    Problem p;
    p.message = std::string("internal error: ") + e.what();
    p.remedy = "this is a bug in cumemctl; please report it with the command line";
    return p;
}

}  // namespace

std::vector<std::string> import_check_arguments(const ImportCheckRequest& request) {
    return {kImportCheckCommand,
            "--socket-fd",
            std::to_string(kImportCheckSocketFd),
            "--device",
            std::to_string(request.child_device >= 0 ? request.child_device : request.device),
            "--handle-type",
            handle_type_name(request.handle_type),
            "--imex-channel-dir",
            request.imex_channel_dir,
            "--libcuda",
            request.libcuda};
}

}  // namespace cumemctl::gpu

namespace cumemctl::gpu {

ipc::Child start_import_check(const ImportCheckRequest& request) {
    ipc::SpawnRequest spawn;
    spawn.executable = request.executable;
    spawn.args = import_check_arguments(request);
    spawn.env = request.child_env;
    return ipc::spawn_connected(std::move(spawn));
}

ImportCheckResult run_import_check(const ImportCheckRequest& request, const ExportedHandle& handle,
                                   std::optional<ipc::Child> started) {
    ImportCheckResult r;
    try {
        ipc::Child child = started ? std::move(*started) : start_import_check(request);
        r.pid = child.process.pid();
        std::optional<Problem> lost;
        try {
            send_handle(child.socket.get(), request, handle);
            ipc::Envelope reply = ipc::receive_envelope(child.socket.get(), request.timeout);
            r.steps = std::move(reply.steps);
            r.problem = std::move(reply.problem);
            if (!reply.result.is_null()) r.check = verify_result_from_json(reply.result);
        } catch (const Error& e) {
            lost = e.problem();
        } catch (const nlohmann::json::exception& e) {
            lost =
                Problem{.exit_code = ExitCode::failed, .message = fmt::format("its report is not valid: {}", e.what())};
        }
        int status = -1;
        if (lost) {
            status = child.process.kill_and_wait();
        } else {
            const auto ended = child.process.wait(request.timeout);
            status = ended ? *ended : child.process.kill_and_wait();
        }
        r.exit_status = ipc::exit_code_of(status);
        if (lost) {
            lost->message = fmt::format("the import check process (pid {}) gave no report (exit status {}): {}", r.pid,
                                        r.exit_status, lost->message);
            lost->remedy = "run the same create again; if it fails again, report it with the command line";
            r.problem = std::move(lost);
        }
    } catch (const Error& e) {
        r.problem = e.problem();
    }
    return r;
}

ImportCheckResult serve_import_check(Driver& driver, int socket, const ImportCheckRequest& request) {
    ImportCheckResult r;
    r.pid = static_cast<int>(getpid());
    DiagnosisContext context;
    context.device = request.device;
    context.handle_type = request.handle_type;
    context.size = request.size;
    context.imex_channel_dir = request.imex_channel_dir;
    StepLog log([&](Problem& p) { diagnose_problem(driver.api(), p, context); }, "importer");
    bool receiving = false;
    try {
        import_map_check(driver, socket, request, log, receiving, r);
    } catch (const Error& e) {
        r.problem = e.problem();
    } catch (const std::exception& e) {
        r.problem = internal_problem(e);
    }
    // One request, one answer: a failure before the handle came still takes it (the first process may
    // send it late, or close its end), so that its send never meets a closed socket.
    if (!receiving) {
        try {
            ipc::receive_envelope(socket, request.timeout);
        } catch (const Error&) {
        }
    }
    r.steps = log.steps();
    try {
        ipc::Envelope answer;
        answer.steps = r.steps;
        answer.problem = r.problem;
        if (r.check) answer.result = to_json(*r.check);
        ipc::send_envelope(socket, answer);
    } catch (const Error&) {
        // The first process has gone: there is no one left to tell.
    }
    return r;
}

}  // namespace cumemctl::gpu
