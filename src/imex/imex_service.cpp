#include "imex/imex_service.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <set>

#include <fmt/format.h>

#include "base/enum_words.hpp"
#include "base/error.hpp"
#include "imex/proc_line.hpp"
#include "ipc/process.hpp"
#include "util/trusted_file.hpp"
#include "util/text_file.hpp"
#include "util/unique_fd.hpp"

namespace cumemctl::imex {
namespace {

// `s` without leading and trailing white space: unlike /proc's blanks (proc_line's trim_blanks), these
// settings files and the tool's output may carry a carriage return or a newline.
std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

// Calls `fn` with each line of `text` (proc_line's for_each_line), trimmed.
template <class Fn>
void each_line(std::string_view text, Fn fn) {
    for_each_line(text, [&](const ProcLine& line) { fn(trim(line.text)); });
}

// An address in a comparable form (inet_ntop of inet_pton), or "" when `text` is not one.
std::string canonical_address(std::string_view text) {
    std::string s(text.substr(0, text.find('%')));
    unsigned char buf[sizeof(in6_addr)];
    char out[INET6_ADDRSTRLEN];
    if (inet_pton(AF_INET, s.c_str(), buf) == 1) return inet_ntop(AF_INET, buf, out, sizeof out);
    if (inet_pton(AF_INET6, s.c_str(), buf) == 1) return inet_ntop(AF_INET6, buf, out, sizeof out);
    return "";
}

std::string json_text(const nlohmann::json& j, const char* key) {
    const auto it = j.find(key);
    if (it == j.end()) return "";
    return it->is_string() ? it->get<std::string>() : it->dump();
}

}  // namespace

std::string ImexConfig::value(std::string_view key) const {
    const auto it = values.find(key);
    return it == values.end() ? std::string() : it->second;
}

std::string ImexConfig::nodes_path() const {
    const std::string v = value("IMEX_NODE_CONFIG_FILE");
    return v.empty() ? kImexNodesPath : v;
}

bool ImexConfig::command_service() const {
    return value("IMEX_CMD_ENABLED") == "1";
}

ImexConfig parse_imex_config(std::string_view text) {
    ImexConfig config;
    config.found = true;
    each_line(text, [&](std::string_view line) {
        if (line.empty() || line.front() == '#') return;
        const std::size_t eq = line.find('=');
        if (eq == std::string_view::npos) return;
        config.values[std::string(trim(line.substr(0, eq)))] = std::string(trim(line.substr(eq + 1)));
    });
    return config;
}

NodeList parse_node_list(std::string_view text) {
    NodeList list;
    each_line(text, [&](std::string_view line) {
        if (line.empty() || line.front() == '#') {
            if (!line.empty()) ++list.skipped_lines;
            return;
        }
        list.entries.emplace_back(line);
    });
    return list;
}

std::vector<std::string> local_addresses() {
    std::vector<std::string> out;
    ifaddrs* list = nullptr;
    if (getifaddrs(&list) != 0) return out;
    for (ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
        if (a->ifa_addr == nullptr) continue;
        char text[INET6_ADDRSTRLEN] = {};
        if (a->ifa_addr->sa_family == AF_INET) {
            inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr, text, sizeof text);
        } else if (a->ifa_addr->sa_family == AF_INET6) {
            inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(a->ifa_addr)->sin6_addr, text, sizeof text);
        } else {
            continue;
        }
        if (std::find(out.begin(), out.end(), text) == out.end()) out.emplace_back(text);
    }
    freeifaddrs(list);
    return out;
}

bool is_numeric_address(std::string_view entry) {
    return !canonical_address(entry).empty();
}

bool names_this_node(std::string_view entry, const std::vector<std::string>& addresses, std::string_view host) {
    const std::string address = canonical_address(entry);
    if (address.empty()) {
        const std::string_view short_host = host.substr(0, host.find('.'));
        return !host.empty() && (entry == host || entry == short_host || entry.substr(0, entry.find('.')) == host);
    }
    return std::any_of(addresses.begin(), addresses.end(),
                       [&](const std::string& a) { return canonical_address(a) == address; });
}

namespace {

// The unit file systemd would load, the administrator's folders first (a mask lives there); "" when none.
std::string imex_unit_path(const std::string& sysroot) {
    static const char* folders[] = {"/etc/systemd/system", "/run/systemd/system", "/usr/local/lib/systemd/system",
                                    "/usr/lib/systemd/system", "/lib/systemd/system"};
    for (const char* folder : folders) {
        std::string path = sysroot + folder + "/nvidia-imex.service";
        struct stat st {};
        if (lstat(path.c_str(), &st) == 0) return path;
    }
    return "";
}

// The first word of a line, less systemd's ExecStart prefixes ("-", "@", "+", "!", ":").
std::string program_of(std::string_view command) {
    command = trim(command);
    while (!command.empty() && std::string_view("-@+!:").find(command.front()) != std::string_view::npos) {
        command.remove_prefix(1);
    }
    return std::string(command.substr(0, command.find_first_of(" \t")));
}

// The real and effective uid in the status file of the process folder `pid_dir` (opened once, so that
// its status and its executable are one process's, whatever pid is reused meanwhile), nullopt when it
// does not say.
std::optional<std::pair<long, long>> process_uids(int pid_dir, const std::string& path) {
    std::optional<std::pair<long, long>> uids;
    std::string status;
    if (UniqueFd fd(::openat(pid_dir, "status", O_RDONLY | O_CLOEXEC)); fd.valid()) {
        try {
            status = read_text_fd(fd.get(), path + "/status", "a process's status", "");
        } catch (const Error&) {
        }
    }
    each_line(status, [&](std::string_view line) {
        if (line.substr(0, 4) != "Uid:") return;
        long real = -1, effective = -1;
        if (std::sscanf(std::string(line.substr(4)).c_str(), "%ld %ld", &real, &effective) == 2) {
            uids = std::make_pair(real, effective);
        }
    });
    return uids;
}

constexpr auto kUnitStateWords = enum_words<UnitState>(
    {{UnitState::not_found, "not-found"}, {UnitState::masked, "masked"}, {UnitState::loaded, "loaded"}}, "not-found");

}  // namespace

UnitState imex_unit_state(const std::string& sysroot) {
    const std::string path = imex_unit_path(sysroot);
    struct stat st {};
    if (path.empty() || lstat(path.c_str(), &st) != 0) return UnitState::not_found;
    if (S_ISLNK(st.st_mode)) {
        char target[PATH_MAX] = {};
        const ssize_t n = readlink(path.c_str(), target, sizeof target - 1);
        if (n > 0 && std::string_view(target, static_cast<std::size_t>(n)) == "/dev/null") return UnitState::masked;
    }
    if (S_ISCHR(st.st_mode) || (S_ISREG(st.st_mode) && st.st_size == 0)) return UnitState::masked;
    return UnitState::loaded;
}

std::string imex_daemon_program(const std::string& sysroot, std::string* refused) {
    std::string program;
    const std::string unit = imex_unit_path(sysroot);
    // The unit decides which executable is the daemon: a unit that others could change is not believed,
    // and the daemon is then the known path's alone.
    std::string refusal;
    const std::string text = unit.empty() ? std::string() : try_read_trusted_text(unit, refusal).value_or("");
    if (refused != nullptr) *refused = refusal;
    each_line(text, [&](std::string_view line) {
        if (program.empty() && line.substr(0, 10) == "ExecStart=") program = program_of(line.substr(10));
    });
    return program.empty() || program[0] != '/' ? kImexDaemonPath : program;
}

std::string_view unit_state_name(UnitState state) {
    return kUnitStateWords.word(state);
}

std::optional<bool> imex_daemon_running(const std::string& sysroot, std::string* refused) {
    const std::string program = imex_daemon_program(sysroot, refused);
    const std::string proc = sysroot + "/proc";
    DIR* dir = opendir(proc.c_str());
    if (dir == nullptr) return false;
    bool found = false, unreadable = false;
    while (const dirent* e = readdir(dir)) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        // Who it is, as the kernel says: root's process running the unit's program (a name is anyone's).
        const std::string pid_path = proc + "/" + e->d_name;
        const UniqueFd pid_dir(::openat(dirfd(dir), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!pid_dir.valid()) continue;
        const auto uids = process_uids(pid_dir.get(), pid_path);
        if (!uids || uids->first != 0 || uids->second != 0) continue;
        char target[PATH_MAX] = {};
        const ssize_t n = readlinkat(pid_dir.get(), "exe", target, sizeof target - 1);
        if (n <= 0) {
            // Only root may read where root's processes run from; a kernel thread has no executable.
            unreadable = unreadable || errno == EACCES || errno == EPERM;
            continue;
        }
        std::string_view exe(target, static_cast<std::size_t>(n));
        // A daemon still running after its package was upgraded runs the file it started from.
        if (const std::string_view deleted = " (deleted)"; exe.size() > deleted.size() && exe.ends_with(deleted)) {
            exe.remove_suffix(deleted.size());
        }
        if (exe == program) {
            found = true;
            break;
        }
    }
    closedir(dir);
    if (!found && unreadable) return std::nullopt;
    return found;
}

std::string find_imex_ctl(const std::string& sysroot) {
    for (const char* folder : kImexCtlSearchPath) {
        std::string path = sysroot + folder + "/nvidia-imex-ctl";
        if (access(path.c_str(), X_OK) == 0) return path;
    }
    return "";
}

TrustedFile open_imex_ctl(const std::string& ctl) {
    return open_trusted(ctl, TrustUse{"nvidia-imex-ctl", "use an nvidia-imex-ctl that only root can change"});
}

std::string CtlAnswer::first_line() const {
    const std::string& text = trim(out).empty() ? err : out;
    const std::string_view t = trim(text);
    return std::string(trim(t.substr(0, t.find('\n'))));
}

CtlAnswer run_imex_ctl(const std::string& ctl, std::vector<std::string> args, ipc::Timeout limit) {
    CtlAnswer answer;
    answer.args = args;
    ipc::SpawnRequest request;
    request.executable = ctl;
    request.argv0 = "nvidia-imex-ctl";
    request.args = std::move(args);
    try {
        const TrustedFile program = open_imex_ctl(ctl);
        if (!program.fd.valid()) {
            throw Error(ExitCode::failed, fmt::format("cannot run {}: {}", ctl, std::strerror(program.error)));
        }
        request.executable_fd = program.fd.get();
        const ipc::CapturedRun run = ipc::run_captured(std::move(request), limit);
        answer.out = run.out;
        answer.err = run.err;
        answer.timed_out = !run.status.has_value();
        if (run.status) answer.exit_code = ipc::exit_code_of(*run.status);
    } catch (const Error& e) {
        answer.error = e.what();
    }
    return answer;
}

std::string DomainNode::label() const {
    std::string name = host_name.empty() ? host : (host.empty() ? host_name : fmt::format("{}, {}", host_name, host));
    return name.empty() ? fmt::format("node #{}", index) : fmt::format("node #{} ({})", index, name);
}

std::optional<DomainStatus> parse_domain_json(std::string_view text, std::string* error) {
    try {
        const nlohmann::json j = nlohmann::json::parse(text);
        if (!j.is_object() || !j.contains("nodes") || !j.at("nodes").is_object()) {
            if (error != nullptr) *error = "no \"nodes\" object";
            return std::nullopt;
        }
        DomainStatus domain;
        domain.status = json_text(j, "status");
        for (const auto& [index, n] : j.at("nodes").items()) {
            if (!n.is_object()) continue;
            DomainNode node{
                index, json_text(n, "host"), json_text(n, "hostName"), json_text(n, "status"), json_text(n, "version"),
                {}};
            if (const auto c = n.find("connections"); c != n.end() && c->is_object()) {
                for (const auto& [peer, conn] : c->items()) {
                    if (conn.is_object()) node.connections.emplace_back(peer, json_text(conn, "status"));
                }
            }
            domain.nodes.push_back(std::move(node));
        }
        std::sort(domain.nodes.begin(), domain.nodes.end(), [](const DomainNode& a, const DomainNode& b) {
            return a.index.size() != b.index.size() ? a.index.size() < b.index.size() : a.index < b.index;
        });
        return domain;
    } catch (const nlohmann::json::exception& e) {
        if (error != nullptr) *error = e.what();
        return std::nullopt;
    }
}

bool same_driver_branch(std::string_view imex_version, std::string_view driver_version) {
    const std::string_view shorter = imex_version.size() <= driver_version.size() ? imex_version : driver_version;
    const std::string_view longer = imex_version.size() <= driver_version.size() ? driver_version : imex_version;
    if (shorter.empty() || longer.substr(0, shorter.size()) != shorter) return false;
    return longer.size() == shorter.size() || longer[shorter.size()] == '.';
}

std::vector<DomainFinding> judge_domain(const DomainStatus& domain, const std::vector<std::string>& addresses,
                                        std::string_view host, std::string_view driver_version) {
    std::vector<DomainFinding> findings;
    if (domain.status == "DOWN") findings.push_back({true, "the IMEX domain is DOWN"});
    if (domain.status == "DEGRADED") findings.push_back({false, "the IMEX domain is DEGRADED"});
    const DomainNode* self = nullptr;
    for (const auto& n : domain.nodes) {
        if (self == nullptr && (names_this_node(n.host, addresses, host) ||
                                (!n.host_name.empty() && names_this_node(n.host_name, addresses, host)))) {
            self = &n;
        }
    }
    for (const auto& n : domain.nodes) {
        if (n.status != "READY") {
            findings.push_back({true, fmt::format("{}{} is {}", n.label(), &n == self ? " (this node)" : "",
                                                  n.status.empty() ? "of unknown status" : n.status)});
        }
    }
    if (self != nullptr) {
        for (const auto& connection : self->connections) {
            const std::string& peer = connection.first;
            const std::string& status = connection.second;
            if (status == "CONNECTED" || peer == self->index) continue;
            const auto it = std::find_if(domain.nodes.begin(), domain.nodes.end(),
                                         [&](const DomainNode& n) { return n.index == peer; });
            const std::string peer_label = it != domain.nodes.end() ? it->label() : fmt::format("node #{}", peer);
            findings.push_back({status != "RECOVERING", fmt::format("this node is not connected to {}: {}", peer_label,
                                                                    status.empty() ? "no status" : status)});
        }
    }
    const std::string reference = self != nullptr ? self->version : std::string();
    std::set<std::string> versions;
    for (const auto& n : domain.nodes) {
        if (!n.version.empty()) versions.insert(n.version);
    }
    if (versions.size() > 1) {
        for (const auto& n : domain.nodes) {
            if (n.version.empty() || (!reference.empty() && n.version == reference) || &n == self) continue;
            findings.push_back(
                {true, fmt::format("{} runs IMEX {}, {} {}: communication between them is disabled", n.label(),
                                   n.version, reference.empty() ? "other nodes run" : "this node runs",
                                   reference.empty() ? fmt::format("{}", fmt::join(versions, ", ")) : reference)});
        }
    }
    if (self != nullptr && !self->version.empty() && !driver_version.empty() &&
        !same_driver_branch(self->version, driver_version)) {
        findings.push_back({true, fmt::format("{} (this node) runs IMEX {} but its GPU driver is {}: the daemon "
                                              "needs the IMEX package of the loaded driver",
                                              self->label(), self->version, driver_version)});
    }
    return findings;
}

}  // namespace cumemctl::imex
