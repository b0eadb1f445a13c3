#include "gpu/diagnosis/channel_verify.hpp"

#include <grp.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cuda/driver.hpp"
#include "gpu/device/device_selector.hpp"
#include "gpu/device/devices.hpp"
#include "gpu/device/held_device.hpp"
#include "gpu/diagnosis/fabric_probe.hpp"
#include "ipc/child.hpp"
#include "ipc/child_command_line.hpp"
#include "ipc/envelope.hpp"
#include "ipc/process.hpp"
#include "steps/step_log.hpp"
#include "util/unix_socket.hpp"

namespace cumemctl::gpu {
using namespace imex;
namespace {

Problem verify_problem(ExitCode code, std::string message, std::string remedy = {}) {
    Problem p;
    p.exit_code = code;
    p.message = std::move(message);
    p.remedy = std::move(remedy);
    return p;
}

// Becomes `as`: the user's supplementary groups (just the group where the user has no name), the
// group, then the user; and checks that root cannot be regained.
void drop_privileges(const Owner& as) {
    if (::geteuid() == as.uid && ::getegid() == as.gid) return;
    const int groups = as.user.empty() ? ::setgroups(1, &as.gid) : ::initgroups(as.user.c_str(), as.gid);
    if (groups != 0 || ::setgid(as.gid) != 0 || ::setuid(as.uid) != 0) {
        const int err = errno;
        throw Error(err == EPERM ? ExitCode::permission : ExitCode::failed,
                    fmt::format("cannot run the verification as {}: {}", format_owner(as), std::strerror(err)),
                    "run it as root: only root can verify as another user");
    }
    if (as.uid != 0 && ::setuid(0) == 0) {
        throw Error(ExitCode::failed, "the verification process could regain root after dropping it", kReportBugRemedy);
    }
}

// What the child found, as the envelope's result.
nlohmann::json found_json(const FabricVerifyResult& r) {
    nlohmann::json j{{"ok", r.ok}, {"uid", r.uid}, {"gid", r.gid}, {"granularity", r.granularity}};
    if (r.device) j["device"] = *r.device;
    if (!r.driver.library.empty()) {
        j["driver"] = {{"library", r.driver.library},
                       {"loaded", r.driver.loaded},
                       {"version", r.driver.version},
                       {"error", r.driver.error}};
    }
    return j;
}

void read_found(const nlohmann::json& j, FabricVerifyResult& r) {
    r.ok = j.at("ok").get<bool>();
    r.uid = j.at("uid").get<uid_t>();
    r.gid = j.at("gid").get<gid_t>();
    r.granularity = j.at("granularity").get<std::uint64_t>();
    if (j.contains("device")) r.device = j.at("device").get<int>();
    if (j.contains("driver")) {
        const auto& d = j["driver"];
        r.driver = DriverInfo{d.at("library").get<std::string>(), d.at("loaded").get<bool>(),
                              d.at("version").get<int>(), d.at("error").get<std::string>()};
    }
}

// The child's work once its privileges are dropped: load, init, probe.
void probe_as_child(const FabricVerifyRequest& request, StepLog& log, FabricVerifyResult& r) {
    Driver driver = log.time("load driver", "dlopen", [&] { return Driver::load(request.libcuda); });
    r.driver = driver.info();
    const int count = log.time("init", "cuInit", [&] { return driver.init(); });
    // The list as the parent passed it on this process's command line, parsed here once.
    r.device = select_devices(parse_device_list(request.device), count, &driver.api()).front();
    FabricProbe probe;
    try {
        probe = probe_fabric_handle(driver.api(), *r.device, request.imex_channel_dir, log);
    } catch (Error& e) {
        // Out of memory beside another job (or its exclusive context) is a GPU in use, exit 3 naming it.
        const nvml::Library nvml = nvml::Library::load(nvml::choose_libnvml({}));
        const std::string uuid = device_identity(driver.api(), *r.device, &nvml).uuid;
        judge_held_problem(e.problem(), &nvml, uuid, {::getpid()});
        throw;
    }
    r.granularity = probe.granularity;
    r.ok = true;
}

}  // namespace

std::vector<std::string> fabric_verify_arguments(const FabricVerifyRequest& request) {
    using ipc::ChildFlag;
    std::vector<std::string> args = ipc::child_arguments(Command::imex_verify);
    ipc::add_child_option(args, ChildFlag::socket_fd, std::to_string(ipc::kChildSocketFd));
    ipc::add_child_option(args, ChildFlag::device, request.device);
    ipc::add_child_option(args, ChildFlag::imex_channel_dir, request.imex_channel_dir);
    ipc::add_child_option(args, ChildFlag::libcuda, request.libcuda);
    if (request.as) {
        ipc::add_child_option(args, ChildFlag::uid, std::to_string(request.as->uid));
        ipc::add_child_option(args, ChildFlag::gid, std::to_string(request.as->gid));
        if (!request.as->user.empty()) ipc::add_child_option(args, ChildFlag::user, request.as->user);
        if (!request.as->group.empty()) ipc::add_child_option(args, ChildFlag::group, request.as->group);
    }
    return args;
}

FabricVerifyResult serve_fabric_verify(const FabricVerifyRequest& request, int socket) {
    FabricVerifyResult r;
    StepLog log({}, "verifier");
    try {
        if (request.as) {
            log.time("drop privileges", "setuid", [&] { drop_privileges(*request.as); });
            ipc::die_with_parent();  // a change of credentials cleared it
        }
        r.uid = ::getuid();
        r.gid = ::getgid();
        probe_as_child(request, log, r);
    } catch (const Error& e) {
        r.problem = e.problem();
    } catch (const std::exception& e) {
        r.problem = internal_error(e.what());
    }
    r.steps = log.steps();
    try {
        ipc::Envelope answer;
        answer.steps = r.steps;
        answer.problem = r.problem;
        answer.result = found_json(r);
        ipc::send_envelope(socket, answer);
    } catch (const Error&) {
        // The parent has gone: there is no one left to tell.
    }
    return r;
}

FabricVerifyResult verify_fabric_in_child(const FabricVerifyRequest& request) {
    FabricVerifyResult result;
    result.driver.library = request.libcuda;
    try {
        ipc::SpawnRequest spawn;
        spawn.executable = request.executable;
        spawn.args = fabric_verify_arguments(request);
        ipc::Child child = ipc::spawn_connected(std::move(spawn));
        std::optional<ipc::Envelope> answer;
        std::optional<Problem> lost;
        bool timed_out = false;
        try {
            answer = ipc::receive_envelope(child.socket.get(), request.timeout);
        } catch (const MessageTimeout& e) {
            lost = e.problem();
            timed_out = true;
        } catch (const Error& e) {
            lost = e.problem();
        }
        const std::optional<int> status = answer ? child.process.wait(request.timeout) : std::nullopt;
        const int final_status = status ? *status : child.process.kill_and_wait();
        if (answer) {
            read_found(answer->result, result);
            result.steps = std::move(answer->steps);
            result.problem = std::move(answer->problem);
            if (result.driver.library.empty() || !answer->result.contains("driver")) {
                result.driver.library = request.libcuda;
                result.driver.error = "not loaded: the verification stopped before loading it";
            }
        } else if (timed_out) {
            result.problem =
                verify_problem(ExitCode::failed,
                               fmt::format("the verification did not finish within {}", ipc::describe(request.timeout)),
                               "the driver hangs; check dmesg and nvidia-smi");
        } else if (final_status >= 0 && ipc::exit_code_of(final_status) > 128) {
            const int sig = ipc::exit_code_of(final_status) - 128;
            result.problem = verify_problem(
                ExitCode::failed, fmt::format("the verification process died of signal {} ({})", sig, strsignal(sig)),
                "run it again; if it keeps dying, the driver crashes in cuMemCreate");
        } else {
            result.problem = verify_problem(
                ExitCode::failed,
                fmt::format("the verification process gave no answer ({})", lost ? lost->message : "no message"));
        }
    } catch (const Error& e) {
        result.problem = e.problem();
    } catch (const nlohmann::json::exception& e) {
        result.problem = verify_problem(ExitCode::failed,
                                        fmt::format("the verification process gave no valid answer ({})", e.what()));
    }
    return result;
}

}  // namespace cumemctl::gpu
