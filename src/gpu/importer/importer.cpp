#include "gpu/importer/importer.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "gpu/device/primary_context.hpp"
#include "gpu/diagnosis/diagnosis.hpp"
#include "ipc/child_command_line.hpp"
#include "steps/step_log.hpp"
#include "util/phase_timing.hpp"
#include "util/stopwatch.hpp"
#include "util/unix_socket.hpp"

namespace cumemctl::gpu {
namespace {

// The importer's start-up: the driver, then the device's primary context (held in `context` until the
// importer ends), as steps of process "importer".
ImporterSession start_up(Driver& driver, int device, std::optional<PrimaryContext>& context) {
    ImporterSession s;
    s.device = device;
    DiagnosisContext diagnosis;
    diagnosis.device = device;
    steps::Diagnoser diagnose;
    if (driver.loaded()) diagnose = [&driver, diagnosis](Problem& p) { diagnose_problem(driver.api(), p, diagnosis); };
    steps::StepLog log(diagnose, "importer");
    const bool ready =
        log.attempt(
            "init", [&] { return fmt::format("{} device(s) visible", driver.init()); }, "cuInit") &&
        log.attempt(
            "context",
            [&] {
                context.emplace(driver.api(), device);
                const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
                return visible != nullptr
                           ? fmt::format("primary context of device {} (CUDA_VISIBLE_DEVICES={})", device, visible)
                           : fmt::format("primary context of device {}", device);
            },
            "cuDevicePrimaryCtxRetain");
    if (ready) s.api = &driver.api();
    s.startup = log.steps();
    s.problem = log.problem();
    return s;
}

// One request's answer by the service it names. Never throws.
ImporterAnswer answer(const ImporterSession& session, std::span<const ImporterService> services,
                      const ipc::Request& request) {
    ImporterAnswer a;
    try {
        for (const ImporterService& service : services) {
            if (request.service == service.name) return service.answer(session, request);
        }
        a.exit_problem = internal_error(fmt::format("the importer has no service '{}'", request.service));
    } catch (const std::exception& e) {
        a.exit_problem = internal_error(e.what());
    }
    a.envelope.steps = session.startup;
    a.envelope.problem = a.exit_problem;
    return a;
}

}  // namespace

std::vector<std::string> importer_arguments(const ImporterStart& start) {
    using ipc::ChildFlag;
    std::vector<std::string> args = ipc::child_arguments(Command::importer);
    ipc::add_child_option(args, ChildFlag::socket_fd, std::to_string(ipc::kChildSocketFd));
    ipc::add_child_option(args, ChildFlag::device, std::to_string(start.view.ordinal));
    ipc::add_child_option(args, ChildFlag::libcuda, start.libcuda);
    return args;
}

ipc::Child start_importer(const ImporterStart& start) {
    ipc::SpawnRequest spawn;
    spawn.executable = start.executable;
    spawn.args = importer_arguments(start);
    spawn.env = start.view.env;
    return ipc::spawn_connected(std::move(spawn));
}

ipc::Child take_importer(ImporterSlot slot, const ImporterStart& start) {
    if (slot.child != nullptr && slot.child->has_value()) {
        ipc::Child child = std::move(**slot.child);
        slot.child->reset();
        return child;
    }
    return start_importer(start);
}

std::optional<int> release_importer(ipc::Child child, ImporterSlot slot, ipc::Timeout timeout) {
    if (slot.keep && slot.child != nullptr) {
        *slot.child = std::move(child);
        return std::nullopt;
    }
    child.socket.reset();
    const std::optional<int> ended = child.process.wait(timeout);
    return ended ? *ended : child.process.kill_and_wait();
}

std::optional<Problem> serve_importer(Driver& driver, int socket, int device, std::span<const ImporterService> services,
                                      ipc::Timeout wait) {
    std::optional<PrimaryContext> context;
    ImporterSession session = start_up(driver, device, context);
    mark_phase("importer: start-up (cuInit, context)");
    std::optional<Problem> exit_problem;
    while (true) {
        Stopwatch watch;
        std::optional<ipc::Request> request;
        try {
            request = ipc::receive_request_or_end(socket, wait);
        } catch (const Error& e) {
            // Nothing came in time, or the socket broke: nothing more can be answered.
            return exit_problem ? exit_problem : std::optional<Problem>(e.problem());
        }
        if (!request) break;  // the first process has no request left
        session.receive_seconds = watch.seconds();
        mark_phase("importer: waited for a request");
        ImporterAnswer a = answer(session, services, *request);
        mark_phase("importer: answered");
        request->fd.reset();
        if (!exit_problem && a.exit_problem) exit_problem = a.exit_problem;
        try {
            ipc::send_envelope(socket, a.envelope);
        } catch (const Error& e) {
            return exit_problem ? exit_problem : std::optional<Problem>(e.problem());
        }
    }
    context.reset();
    end_sending(socket);  // the first process waits for this before it measures copies
    mark_phase("importer: no request left, context released");
    return exit_problem;
}

}  // namespace cumemctl::gpu
