#include "imex/channel_verify.hpp"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cuda/driver.hpp"
#include "gpu/devices.hpp"
#include "gpu/fabric_probe.hpp"
#include "util/unique_fd.hpp"

namespace cumemctl {
namespace {

Problem problem_of(ExitCode code, std::string message, std::string remedy = {}) {
    Problem p;
    p.exit_code = code;
    p.message = std::move(message);
    p.remedy = std::move(remedy);
    return p;
}

nlohmann::json problem_json(const Problem& p) {
    nlohmann::json j{{"exit_code", static_cast<int>(p.exit_code)}, {"message", p.message}, {"cause", p.cause},
                     {"remedy", p.remedy}};
    if (p.device) j["device"] = *p.device;
    if (p.driver) j["driver"] = {{"call", p.driver->call}, {"code", p.driver->code}, {"name", p.driver->name}, {"text", p.driver->text}};
    return j;
}

Problem problem_from(const nlohmann::json& j) {
    Problem p = problem_of(static_cast<ExitCode>(j.at("exit_code").get<int>()), j.at("message").get<std::string>(),
                           j.at("remedy").get<std::string>());
    p.cause = j.at("cause").get<std::string>();
    if (j.contains("device")) p.device = j["device"].get<int>();
    if (j.contains("driver")) {
        const auto& d = j["driver"];
        p.driver = DriverFailure{d.at("call").get<std::string>(), d.at("code").get<int>(), d.at("name").get<std::string>(),
                                 d.at("text").get<std::string>()};
    }
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
                    "run imex-setup --verify --owner as root");
    }
    if (as.uid != 0 && ::setuid(0) == 0) {
        throw Error(ExitCode::failed, "the verification process could regain root after dropping it",
                    "this is a bug in cumemctl; please report it");
    }
}

// The child's whole work, as the JSON it sends back.
nlohmann::json child_work(const FabricVerifyRequest& request) {
    nlohmann::json out{{"ok", false}};
    try {
        if (request.as) drop_privileges(*request.as);
        out["uid"] = ::getuid();
        out["gid"] = ::getgid();
        Driver driver = Driver::load(request.libcuda);
        const DriverInfo& info = driver.info();
        out["driver"] = {{"library", info.library}, {"loaded", info.loaded}, {"version", info.version}, {"error", info.error}};
        const int count = driver.init();
        select_devices(std::to_string(request.device), count);
        const FabricProbe probe = probe_fabric_handle(driver.api(), request.device);
        out["granularity"] = probe.granularity;
        out["ok"] = true;
    } catch (const Error& e) {
        out["problem"] = problem_json(e.problem());
    } catch (const std::exception& e) {
        out["problem"] = problem_json(problem_of(ExitCode::failed, std::string("internal error: ") + e.what()));
    }
    return out;
}

[[noreturn]] void run_child(const FabricVerifyRequest& request, int write_fd) {
    ::dup2(STDERR_FILENO, STDOUT_FILENO);
    const std::string text = child_work(request).dump();
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(write_fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        done += static_cast<std::size_t>(n);
    }
    ::_exit(0);
}

// Reads the child's answer until end of file or the deadline; false on timeout.
bool read_answer(int fd, int timeout_ms, std::string& text) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    char buffer[4096];
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return false;
        pollfd p{fd, POLLIN, 0};
        const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
        if (ready < 0 && errno == EINTR) continue;
        if (ready == 0) return false;
        if (ready < 0) return true;
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return true;
        text.append(buffer, static_cast<std::size_t>(n));
    }
}

FabricVerifyResult result_from(const nlohmann::json& j) {
    FabricVerifyResult r;
    r.ok = j.at("ok").get<bool>();
    r.uid = j.value("uid", 0U);
    r.gid = j.value("gid", 0U);
    if (j.contains("driver")) {
        const auto& d = j["driver"];
        r.driver = DriverInfo{d.at("library").get<std::string>(), d.at("loaded").get<bool>(), d.at("version").get<int>(),
                              d.at("error").get<std::string>()};
    }
    r.granularity = j.value("granularity", std::uint64_t{0});
    if (j.contains("problem")) r.problem = problem_from(j["problem"]);
    return r;
}

}  // namespace

FabricVerifyResult verify_fabric_in_child(const FabricVerifyRequest& request) {
    FabricVerifyResult result;
    result.driver.library = request.libcuda;
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        result.problem = problem_of(ExitCode::failed, fmt::format("cannot verify: pipe: {}", std::strerror(errno)));
        return result;
    }
    UniqueFd read_end(fds[0]);
    UniqueFd write_end(fds[1]);
    const pid_t pid = ::fork();
    if (pid < 0) {
        result.problem = problem_of(ExitCode::failed, fmt::format("cannot verify: fork: {}", std::strerror(errno)));
        return result;
    }
    if (pid == 0) {
        read_end.reset();
        run_child(request, write_end.get());
    }
    write_end.reset();
    std::string text;
    const bool finished = read_answer(read_end.get(), request.timeout_ms, text);
    if (!finished) ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!finished) {
        result.problem = problem_of(ExitCode::failed,
                                    fmt::format("the verification did not finish within {} s", request.timeout_ms / 1000),
                                    "the driver hangs; check dmesg and nvidia-smi");
    } else if (WIFSIGNALED(status)) {
        result.problem = problem_of(ExitCode::failed,
                                    fmt::format("the verification process died of signal {} ({})", WTERMSIG(status),
                                                strsignal(WTERMSIG(status))),
                                    "run it again; if it keeps dying, the driver crashes in cuMemCreate");
    } else {
        try {
            result = result_from(nlohmann::json::parse(text));
            if (result.driver.library.empty()) {
                result.driver.library = request.libcuda;
                result.driver.error = "not loaded: the verification stopped before loading it";
            }
        } catch (const std::exception& e) {
            result.problem = problem_of(ExitCode::failed, fmt::format("the verification process gave no answer ({})", e.what()));
        }
    }
    return result;
}

}  // namespace cumemctl
