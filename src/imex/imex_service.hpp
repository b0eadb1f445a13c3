// The IMEX service as a node has it (../shared/mnnvl-facts.md §3): its configuration file and node file,
// the host's systemd unit, whether the daemon runs, and the domain as nvidia-imex-ctl reports it (-q, -N
// -j). Read only; every path is under a system root so that tests can make one.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ipc/timeout.hpp"
#include "util/trusted_file.hpp"

namespace cumemctl::imex {

// Where the IMEX daemon and nvidia-imex-ctl read their settings by default, and the node file's default.
inline constexpr const char* kImexConfigPath = "/etc/nvidia-imex/config.cfg";
inline constexpr const char* kImexNodesPath = "/etc/nvidia-imex/nodes_config.cfg";
// Where the nvidia-imex package puts the daemon (its unit's ExecStart, mnnvl-facts.md §3).
inline constexpr const char* kImexDaemonPath = "/usr/bin/nvidia-imex";
// Where DCGM looks for nvidia-imex-ctl (mnnvl-facts.md §3.3).
inline constexpr const char* kImexCtlSearchPath[] = {"/usr/bin", "/usr/local/bin", "/opt/nvidia/imex/bin",
                                                     "/usr/local/nvidia/imex/bin"};
// How long each nvidia-imex-ctl call may take: a daemon that hangs costs doctor at most the sum.
inline constexpr ipc::Timeout kImexCtlQueryLimit{2000};
inline constexpr ipc::Timeout kImexCtlDomainLimit{3000};

// config.cfg: KEY=VALUE lines (read only at the daemon's start).
struct ImexConfig {
    std::string path;  // as shown (without the system root)
    bool found = false;
    std::map<std::string, std::string, std::less<>> values;
    std::string nodes_path() const;  // IMEX_NODE_CONFIG_FILE, or the default
    bool command_service() const;    // IMEX_CMD_ENABLED=1
    std::string value(std::string_view key) const;
};
// Parses the text of a config.cfg (comments and blank lines skipped, values trimmed).
ImexConfig parse_imex_config(std::string_view text);

// The node file: one address (or, on newer IMEX, a host name) per line; blank and '#' lines skipped
// and counted (whether IMEX itself skips them is not known).
struct NodeList {
    std::vector<std::string> entries;
    int skipped_lines = 0;
};
NodeList parse_node_list(std::string_view text);

// This host's interface addresses (getifaddrs), numeric, IPv4 and IPv6 (without a zone).
std::vector<std::string> local_addresses();
// Whether `entry` names one of `addresses` (compared as addresses, so "::1" matches "0:0::1") or is this
// host's name (`host`, or its first label).
bool names_this_node(std::string_view entry, const std::vector<std::string>& addresses, std::string_view host);
// Whether `entry` is a numeric IPv4 or IPv6 address.
bool is_numeric_address(std::string_view entry);

// The host's nvidia-imex systemd unit: not found, masked (linked to /dev/null), or present.
enum class UnitState { not_found, masked, loaded };
UnitState imex_unit_state(const std::string& sysroot);
std::string_view unit_state_name(UnitState state);
// The daemon's program: the first word of the unit's ExecStart, else kImexDaemonPath. As root, a unit
// that others could change is not believed (kImexDaemonPath then), its refusal in `refused`.
std::string imex_daemon_program(const std::string& sysroot, std::string* refused = nullptr);
// Whether the IMEX daemon runs: a process of root (real and effective uid 0 in /proc/PID/status)
// whose executable (/proc/PID/exe) is imex_daemon_program, under the system root. Never its name
// (/proc/PID/comm): any user can call a process nvidia-imex. nullopt when it cannot tell: not found, and
// a root process's executable could not be read (only root may read it).
std::optional<bool> imex_daemon_running(const std::string& sysroot, std::string* refused = nullptr);

// nvidia-imex-ctl PATH: the given one, else the first of kImexCtlSearchPath under the root; "" when none.
std::string find_imex_ctl(const std::string& sysroot);

// Opens nvidia-imex-ctl to run it (open_trusted): throws Error (permission) where root would run one
// that others can change, the one given or the one found under a system root.
TrustedFile open_imex_ctl(const std::string& ctl);

// One nvidia-imex-ctl call: what it printed, how it ended.
struct CtlAnswer {
    std::vector<std::string> args;
    bool timed_out = false;
    int exit_code = -1;  // -1 when it did not end (timed out) or did not start
    std::string out, err;
    std::string error;  // why it could not be started
    // The first line it printed (stdout, else stderr), for messages.
    std::string first_line() const;
};
// Runs `ctl args...` for at most `limit` (opened once by open_imex_ctl and run through that descriptor; its
// refusal in `error`); never throws Error (an Interrupted stop request passes).
CtlAnswer run_imex_ctl(const std::string& ctl, std::vector<std::string> args, ipc::Timeout limit);

// The domain of `nvidia-imex-ctl -N -j` (shape: ai-cloud-validation's imex_domain_test.py, facts §3.4).
struct DomainNode {
    std::string index;  // "0": the node's line in the node file
    std::string host, host_name, status, version;
    std::vector<std::pair<std::string, std::string>> connections;  // peer index -> CONNECTED, INVALID, ...
    std::string label() const;                                     // "node #1 (10.0.0.2)"
};
struct DomainStatus {
    std::string status;  // UP, DEGRADED, DOWN
    std::vector<DomainNode> nodes;
};
// Parses -N -j's JSON; nullopt with `error` when it is not that shape.
std::optional<DomainStatus> parse_domain_json(std::string_view text, std::string* error);

// One thing wrong with the domain, naming its node.
struct DomainFinding {
    bool fail = false;  // else a warning
    std::string text;
};
// What the domain says: DOWN, DEGRADED, nodes not READY, this node's connections that are not CONNECTED
// (this node: the one whose host `addresses`/`host` name), versions that differ between nodes or from
// this node's driver (`driver_version`, as NVML gives it; "" when unknown).
std::vector<DomainFinding> judge_domain(const DomainStatus& domain, const std::vector<std::string>& addresses,
                                        std::string_view host, std::string_view driver_version);

// Whether an IMEX version ("570.172") is the driver's ("570.172.08"): equal, or one a prefix of the other
// at a '.'.
bool same_driver_branch(std::string_view imex_version, std::string_view driver_version);

}  // namespace cumemctl::imex
