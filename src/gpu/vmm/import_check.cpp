#include "gpu/vmm/import_check.hpp"

#include <fmt/format.h>

#include "gpu/vmm/device_mapping.hpp"
#include "gpu/diagnosis/diagnosis.hpp"
#include "gpu/device/memory_props.hpp"
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
    ipc::Request e;
    e.service = kImportCheckService.name;
    e.fields = {{"handle_type", handle_type_name(request.handle_type)},
                {"imex_channel_dir", request.imex_channel_dir},
                {"size", request.size},
                {"alignment", request.alignment},
                {"seed", request.seed}};
    if (handle.type == CU_MEM_HANDLE_TYPE_FABRIC) {
        e.fields["fabric_handle"] = ipc::to_hex(handle.fabric.data, sizeof handle.fabric.data);
        ipc::send_request(socket, e);
    } else {
        e.fields["posix_fd"] = true;
        ipc::send_request(socket, e, handle.fd.get());
    }
}

// The fabric handle in a received request; throws Error when it is not 64 bytes in hex.
CUmemFabricHandle fabric_of(const ipc::Request& message) {
    CUmemFabricHandle h{};
    const std::string hex = message.fields.value("fabric_handle", "");
    if (hex.size() != 2 * sizeof h.data) {
        throw Error(ExitCode::failed, fmt::format("the fabric handle that arrived has {} hex digits, not {}",
                                                  hex.size(), 2 * sizeof h.data));
    }
    ipc::from_hex(hex, h.data, sizeof h.data);
    return h;
}

AllocationHandle import_received(const DriverApi& api, const ipc::Request& message, CUmemAllocationHandleType type) {
    if (type == CU_MEM_HANDLE_TYPE_FABRIC) return import_fabric(api, fabric_of(message));
    if (!message.fd.valid()) throw Error(ExitCode::failed, "no file descriptor arrived with the handle message");
    return import_posix_fd(api, message.fd.get());
}

// The importer's work on one request, its start-up done: import, map, check, release.
void import_map_check(const DriverApi& api, const ipc::Request& message, const ImportCheckRequest& request,
                      StepLog& log, ImportCheckResult& r) {
    AllocationHandle handle = log.time("import", "cuMemImportFromShareableHandle",
                                       [&] { return import_received(api, message, request.handle_type); });
    DeviceMapping mapping(api, handle.get(), request.size, request.alignment, {request.device}, log);
    r.check = log.time("check", "check_pattern",
                       [&] { return check_pattern(api, mapping.address(), request.size, request.seed); });
    mapping.release(log);
    log.time("release", "cuMemRelease", [&] { handle.release(); });
}

}  // namespace

ImporterStart import_check_start(const ImportCheckRequest& request) {
    return ImporterStart{
        request.executable, request.libcuda,
        ChildDeviceView{request.child_device >= 0 ? request.child_device : request.device, request.child_env}};
}

ImportCheckResult run_import_check(const ImportCheckRequest& request, const ExportedHandle& handle,
                                   ImporterSlot importer) {
    ImportCheckResult r;
    try {
        ipc::Child child = take_importer(importer, import_check_start(request));
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
        if (lost) {
            r.exit_status = ipc::exit_code_of(child.process.kill_and_wait());
            lost->message = fmt::format("the import check process (pid {}) gave no report (exit status {}): {}", r.pid,
                                        r.exit_status, lost->message);
            lost->remedy = "run the same create again; if it fails again, report it with the command line";
            r.problem = std::move(lost);
        } else if (const auto status = release_importer(std::move(child), importer, request.timeout)) {
            r.exit_status = ipc::exit_code_of(*status);
        }
    } catch (const Error& e) {
        r.problem = e.problem();
    }
    return r;
}

ImporterAnswer answer_import_check(const ImporterSession& session, const ipc::Request& message) {
    ImportCheckRequest request;
    request.device = session.device;
    ImportCheckResult r;
    DiagnosisContext context;
    context.device = session.device;
    try {
        const nlohmann::json& m = message.fields;
        request.handle_type = parse_handle_type(m.value("handle_type", std::string("posix-fd")));
        request.imex_channel_dir = m.value("imex_channel_dir", request.imex_channel_dir);
        request.size = m.value("size", request.size);
        request.alignment = m.value("alignment", request.alignment);
        request.seed = m.value("seed", request.seed);
        context.handle_type = request.handle_type;
        context.size = request.size;
        context.imex_channel_dir = request.imex_channel_dir;
    } catch (const std::exception& e) {
        r.problem = internal_error(e.what());
    }
    const DriverApi* api = session.api;
    StepLog log(
        [api, context](Problem& p) {
            if (api != nullptr) diagnose_problem(*api, p, context);
        },
        "importer");
    log.append(session.startup);
    if (session.problem) {
        r.problem = session.problem;
    } else if (!r.problem) {
        log.note("receive", session.receive_seconds, "the handle over a Unix socket").call = "recvmsg";
        try {
            import_map_check(*session.api, message, request, log, r);
        } catch (const Error& e) {
            r.problem = e.problem();
        } catch (const std::exception& e) {
            r.problem = internal_error(e.what());
        }
    }
    ImporterAnswer a;
    a.envelope.steps = log.steps();
    a.envelope.problem = r.problem;
    if (r.check) a.envelope.result = to_json(*r.check);
    if (r.problem) {
        a.exit_problem = r.problem;
    } else if (!r.ok()) {
        a.exit_problem = Problem{.exit_code = ExitCode::failed, .message = "the pattern check failed"};
    }
    return a;
}

}  // namespace cumemctl::gpu
