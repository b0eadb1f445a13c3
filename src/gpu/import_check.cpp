#include "gpu/import_check.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "gpu/device_mapping.hpp"
#include "gpu/diagnosis.hpp"
#include "gpu/memory_props.hpp"
#include "gpu/primary_context.hpp"
#include "gpu/verify_json.hpp"
#include "report/report.hpp"
#include "util/unix_socket.hpp"

namespace cumemctl {
namespace {

// A started process that is waited for: killed first if it is still running when the guard goes.
class ChildProcess {
public:
    explicit ChildProcess(pid_t pid) : pid_(pid) {}
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;
    ~ChildProcess() {
        if (pid_ <= 0) return;
        kill(pid_, SIGKILL);
        wait();
    }
    pid_t pid() const { return pid_; }
    // Waits for the process to end; its exit code, or 128 + N when signal N ended it.
    int wait() {
        int status = 0;
        pid_t r = -1;
        do {
            r = waitpid(pid_, &status, 0);
        } while (r < 0 && errno == EINTR);
        pid_ = -1;
        if (r < 0) return -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }

private:
    pid_t pid_;
};

// Starts `executable` with `args`, its end of the socket as descriptor kImportCheckSocketFd and its
// standard output on our standard error (so that our own output stays one document).
pid_t spawn_child(const std::string& executable, const std::vector<std::string>& args, int child_socket) {
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(executable.c_str()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    // dup2 onto the same number would keep close-on-exec: move the socket out of the way first.
    UniqueFd moved;
    if (child_socket == kImportCheckSocketFd) {
        moved.reset(fcntl(child_socket, F_DUPFD_CLOEXEC, kImportCheckSocketFd + 1));
        if (!moved.valid()) throw Error(ExitCode::failed, fmt::format("fcntl failed: {}", std::strerror(errno)));
        child_socket = moved.get();
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, child_socket, kImportCheckSocketFd);
    posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
    pid_t pid = -1;
    const int err = posix_spawn(&pid, executable.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (err != 0) {
        throw Error(ExitCode::failed, fmt::format("cannot start {}: {}", executable, std::strerror(err)));
    }
    return pid;
}

Problem problem_from_json(const nlohmann::json& j) {
    Problem p;
    p.message = j.at("message").get<std::string>();
    p.cause = j.value("cause", "");
    p.remedy = j.value("remedy", "");
    p.exit_code = static_cast<ExitCode>(j.value("exit_code", 1));
    if (j.contains("device")) p.device = j["device"].get<int>();
    if (j.contains("driver_call")) {
        const auto& d = j["driver_call"];
        p.driver = DriverFailure{d.at("call").get<std::string>(), d.at("result").get<int>(),
                                 d.at("name").get<std::string>(), d.at("text").get<std::string>()};
    }
    return p;
}

nlohmann::json result_json(const ImportCheckResult& r) {
    nlohmann::json steps = nlohmann::json::array();
    for (const auto& s : r.steps) steps.push_back(to_json(s));
    return {{"pid", r.pid},
            {"steps", steps},
            {"check", r.check ? to_json(*r.check) : nlohmann::json(nullptr)},
            {"problem", r.problem ? to_json(*r.problem) : nlohmann::json(nullptr)}};
}

void read_result_json(const nlohmann::json& j, ImportCheckResult& r) {
    for (const auto& s : j.at("steps")) r.steps.push_back(step_from_json(s));
    if (!j.at("check").is_null()) r.check = verify_result_from_json(j["check"]);
    if (!j.at("problem").is_null()) r.problem = problem_from_json(j["problem"]);
}

// What the first process sends: the descriptor with a one-word message, or the fabric handle's bytes.
void send_handle(int socket, const ExportedHandle& handle) {
    if (handle.type == CU_MEM_HANDLE_TYPE_FABRIC) {
        send_message(socket,
                     std::string_view(reinterpret_cast<const char*>(handle.fabric.data), sizeof handle.fabric.data));
    } else {
        send_message(socket, "posix-fd", handle.fd.get());
    }
}

// The fabric handle in a received message; throws Error when it is not 64 bytes.
CUmemFabricHandle fabric_of(const Message& message) {
    CUmemFabricHandle h{};
    if (message.bytes.size() != sizeof h.data) {
        throw Error(ExitCode::failed, fmt::format("the fabric handle that arrived has {} bytes, not {}",
                                                  message.bytes.size(), sizeof h.data));
    }
    std::memcpy(h.data, message.bytes.data(), sizeof h.data);
    return h;
}

AllocationHandle import_received(const DriverApi& api, const Message& message, CUmemAllocationHandleType type) {
    if (type == CU_MEM_HANDLE_TYPE_FABRIC) return import_fabric(api, fabric_of(message));
    if (!message.fd.valid()) throw Error(ExitCode::failed, "no file descriptor arrived with the handle message");
    return import_posix_fd(api, message.fd.get());
}

// The second process's work once the handle has arrived: import, map, check, release.
void import_map_check(Driver& driver, const Message& message, const ImportCheckRequest& request, ImportCheckResult& r) {
    DiagnosisContext context;
    context.device = request.device;
    context.handle_type = request.handle_type;
    context.size = request.size;
    context.imex_channel_dir = request.imex_channel_dir;
    const Diagnoser diagnose = [&](Problem& p) { diagnose_problem(driver.api(), p, context); };
    timed_step(
        r.steps, "init", "cuInit", [&] { driver.init(); }, diagnose);
    const DriverApi& api = driver.api();
    std::optional<PrimaryContext> ctx;
    timed_step(
        r.steps, "context", "cuDevicePrimaryCtxRetain", [&] { ctx.emplace(api, request.device); }, diagnose);
    AllocationHandle handle = timed_step(
        r.steps, "import", "cuMemImportFromShareableHandle",
        [&] { return import_received(api, message, request.handle_type); }, diagnose);
    DeviceMapping mapping(api, handle.get(), request.size, request.alignment, {request.device}, r.steps, diagnose);
    r.check = timed_step(
        r.steps, "check", "check_pattern",
        [&] { return check_pattern(api, mapping.address(), request.size, request.seed); }, diagnose);
    mapping.release(r.steps, diagnose);
    timed_step(
        r.steps, "release", "cuMemRelease", [&] { handle.release(); }, diagnose);
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
            std::to_string(request.device),
            "--size",
            std::to_string(request.size),
            "--handle-type",
            handle_type_name(request.handle_type),
            "--seed",
            std::to_string(request.seed),
            "--alignment",
            std::to_string(request.alignment),
            "--imex-channel-dir",
            request.imex_channel_dir,
            "--libcuda",
            request.libcuda};
}

}  // namespace cumemctl

namespace cumemctl {

ImportCheckResult run_import_check(const ImportCheckRequest& request, const ExportedHandle& handle) {
    ImportCheckResult r;
    try {
        auto [mine, theirs] = socket_pair();
        ChildProcess child(spawn_child(request.executable, import_check_arguments(request), theirs.get()));
        theirs.reset();
        r.pid = child.pid();
        std::optional<Problem> lost;
        try {
            send_handle(mine.get(), handle);
            const Message reply = receive_message(mine.get(), request.timeout_ms);
            read_result_json(nlohmann::json::parse(reply.bytes), r);
        } catch (const Error& e) {
            lost = e.problem();
        } catch (const nlohmann::json::exception& e) {
            lost = Problem{ExitCode::failed, fmt::format("its report is not valid: {}", e.what()), {}, {}, {}, {}};
        }
        if (lost) kill(child.pid(), SIGKILL);
        r.exit_status = child.wait();
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
    try {
        const Message message = timed_step(
            r.steps, "receive", "recvmsg", [&] { return receive_message(socket, request.timeout_ms); },
            [](Problem&) {});
        import_map_check(driver, message, request, r);
    } catch (const Error& e) {
        r.problem = e.problem();
    } catch (const std::exception& e) {
        r.problem = internal_problem(e);
    }
    try {
        send_message(socket, result_json(r).dump());
    } catch (const Error&) {
        // The first process has gone: there is no one left to tell.
    }
    return r;
}

}  // namespace cumemctl
