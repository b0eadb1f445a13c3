// The imex-domain check: the node's IMEX service and the domain it belongs to, asked only where a GPU is
// attached to a multi-node NVLink fabric, and bounded in time whatever the daemon does
// (../shared/mnnvl-facts.md §3, §4).
#include <cstdlib>

#include <fmt/format.h>

#include "doctor/registry.hpp"
#include "imex/imex_service.hpp"
#include "nvml/fabric_info.hpp"
#include "util/host.hpp"
#include "util/trusted_file.hpp"

namespace cumemctl::doctor {
namespace {

using namespace imex;

// What the check found so far: the worst finding decides.
struct Findings {
    std::vector<DomainFinding> list;
    std::vector<std::string> remedies;  // the remedy of each finding of `list` ("" for the general one)
    ImexDomainEvidence details;

    void add(bool fail, std::string text, std::string remedy = "") {
        list.push_back({fail, std::move(text)});
        remedies.push_back(std::move(remedy));
    }
    bool any_fail() const {
        return std::any_of(list.begin(), list.end(), [](const DomainFinding& f) { return f.fail; });
    }
    CheckOutcome outcome(const std::string& remedy, const std::string& pass_reason) {
        std::vector<ImexFinding> texts;
        for (const auto& f : list) texts.push_back({f.fail ? CheckStatus::fail : CheckStatus::warn, f.text});
        details.findings = std::move(texts);
        if (list.empty()) return CheckOutcome::pass(pass_reason, std::move(details));
        const bool fail = any_fail();
        std::vector<std::string> shown;
        std::string first_remedy;
        for (std::size_t i = 0; i < list.size(); ++i) {
            if (list[i].fail != fail) continue;
            if (shown.empty() && i < remedies.size()) first_remedy = remedies[i];
            shown.push_back(list[i].text);
        }
        const std::string& what_to_do = first_remedy.empty() ? remedy : first_remedy;
        std::string reason =
            fmt::format("{}", fmt::join(shown.begin(), shown.begin() + std::min<std::size_t>(shown.size(), 3), "; "));
        if (shown.size() > 3) reason += fmt::format(" (and {} more)", shown.size() - 3);
        return fail ? CheckOutcome::fail(reason, what_to_do, std::move(details))
                    : CheckOutcome::warn(reason, what_to_do, std::move(details));
    }
};

// Where IMEX is run by something else than this host's systemd: why, or "".
std::string managed_externally(const DoctorContext& ctx, UnitState unit) {
    if (std::getenv("KUBERNETES_SERVICE_HOST") != nullptr) {
        return "running in a Kubernetes pod (KUBERNETES_SERVICE_HOST is set): a DRA ComputeDomain runs the IMEX "
               "daemon in a pod of its own";
    }
    if (unit == UnitState::masked) {
        return "the host's nvidia-imex unit is masked (as with DRA ComputeDomains)";
    }
    if (unit == UnitState::not_found) {
        return fmt::format("the host has no nvidia-imex unit{}",
                           ctx.options.sysroot.empty() ? "" : fmt::format(" under {}", ctx.options.sysroot));
    }
    return "";
}

const char* kServiceRemedy =
    "check the IMEX daemon: 'systemctl status nvidia-imex', its log /var/log/nvidia-imex.log, and "
    "'nvidia-imex-ctl -N' for the domain; the node file must be the same on every node and list this node's "
    "address, and the IMEX package must match the driver";

// The settings file and the node file: the address checks (failure a of the facts).
void check_files(const DoctorContext& ctx, const ImexConfig& config, const std::vector<std::string>& addresses,
                 Findings& f) {
    const std::string nodes_path = config.nodes_path();
    f.details.nodes_file = nodes_path;
    std::string refused;
    const auto nodes_text = try_read_trusted_text(ctx.path(nodes_path), refused);
    if (!nodes_text) {
        f.add(true, refused.empty() ? fmt::format("the node file {} (IMEX_NODE_CONFIG_FILE) cannot be read", nodes_path)
                                    : refused);
        return;
    }
    const NodeList nodes = parse_node_list(*nodes_text);
    f.details.nodes = nodes.entries;
    const std::string host = host_name();
    const bool listed = std::any_of(nodes.entries.begin(), nodes.entries.end(),
                                    [&](const std::string& e) { return names_this_node(e, addresses, host); });
    const bool names_only = std::none_of(nodes.entries.begin(), nodes.entries.end(), is_numeric_address);
    if (nodes.entries.empty()) {
        f.add(true, fmt::format("the node file {} lists no node", nodes_path));
    } else if (!listed && names_only) {
        f.add(false, fmt::format("no entry of the node file {} is this host's name ({}), and host names are not "
                                 "resolved here: check that one of them is this node",
                                 nodes_path, host));
    } else if (!listed) {
        f.add(true,
              fmt::format("no local address matches the node file {} ({}): the IMEX daemon exits with 'No "
                          "matching network interface found'",
                          nodes_path, fmt::join(nodes.entries, ", ")),
              fmt::format("list this node's address (one of {}) in {} on every node of the domain, the same file "
                          "everywhere, then 'sudo systemctl restart nvidia-imex'",
                          fmt::join(addresses, ", "), nodes_path));
    }
    if (nodes.skipped_lines > 0) {
        f.add(false, fmt::format("the node file {} has {} comment line{}: IMEX may not skip them", nodes_path,
                                 nodes.skipped_lines, nodes.skipped_lines == 1 ? "" : "s"));
    }
    if (const std::string bind = config.value("BIND_INTERFACE_IP"); !bind.empty()) {
        if (!names_this_node(bind, addresses, host)) {
            f.add(true, fmt::format("BIND_INTERFACE_IP {} of {} is not an address of this host", bind, config.path),
                  fmt::format("set BIND_INTERFACE_IP in {} to an address of this host (or leave it empty), then 'sudo "
                              "systemctl restart nvidia-imex'",
                              config.path));
        }
    }
}

// Asks the command service: -q (READY expected), then -N -j (the domain).
void ask_command_service(const DoctorContext& ctx, const ImexConfig& config, const std::vector<std::string>& addresses,
                         Findings& f) {
    const std::string ctl = !ctx.options.imex_ctl.empty() ? ctx.options.imex_ctl : find_imex_ctl(ctx.options.sysroot);
    if (ctl.empty()) {
        f.add(false, "nvidia-imex-ctl was not found, so the domain was not asked",
              "install the nvidia-imex package of this driver: it has nvidia-imex-ctl");
        return;
    }
    f.details.imex_ctl = ctl;
    const std::string config_arg = ctx.path(config.path);
    const CtlAnswer q = run_imex_ctl(ctl, {"-c", config_arg, "-q"}, kImexCtlQueryLimit);
    f.details.query = CtlEvidence{q.exit_code, q.timed_out, q.first_line()};
    if (!q.error.empty()) {
        f.add(false, fmt::format("nvidia-imex-ctl cannot be run: {}", q.error));
        return;
    }
    if (q.timed_out) {
        f.add(true, fmt::format("nvidia-imex-ctl -q did not answer within {}: the IMEX daemon hangs",
                                ipc::describe(kImexCtlQueryLimit)));
        return;
    }
    if (q.exit_code != 0) {
        f.add(
            true,
            fmt::format("the IMEX daemon's command service does not answer (nvidia-imex-ctl -q exited with {}: "
                        "{})",
                        q.exit_code, q.first_line()),
            "check that the daemon runs and that its command service (IMEX_CMD_ENABLED, IMEX_CMD_PORT) listens "
            "where nvidia-imex-ctl -c reads it; on an IPv6-only resolver try 'nvidia-imex-ctl -i 127.0.0.1 50005 -q'");
        return;
    }
    if (q.first_line() != "READY") {
        // Not ready yet (WAITING_FOR_PEERS, INIT_GPU, ...): the domain is not formed, so it is not asked.
        f.add(false, fmt::format("the IMEX daemon is {}, not READY", q.first_line()));
        return;
    }
    const CtlAnswer n = run_imex_ctl(ctl, {"-c", config_arg, "-N", "-j"}, kImexCtlDomainLimit);
    f.details.domain_query = CtlEvidence{n.exit_code, n.timed_out, {}};
    if (n.timed_out || n.exit_code != 0) {
        f.add(true, n.timed_out ? fmt::format("nvidia-imex-ctl -N -j did not answer within {}",
                                              ipc::describe(kImexCtlDomainLimit))
                                : fmt::format("nvidia-imex-ctl -N -j exited with {}: {}", n.exit_code, n.first_line()));
        return;
    }
    std::string error;
    const auto domain = parse_domain_json(n.out, &error);
    if (!domain) {
        f.add(false, fmt::format("nvidia-imex-ctl -N -j printed no domain this check can read: {}", error));
        return;
    }
    f.details.domain = domain->status;
    std::vector<ImexNodeEvidence> nodes;
    for (const auto& node : domain->nodes) nodes.push_back({node.index, node.host, node.status, node.version});
    f.details.domain_nodes = std::move(nodes);
    const std::string driver = ctx.nvml != nullptr ? ctx.nvml->info().driver_version : std::string();
    for (auto& finding : judge_domain(*domain, addresses, host_name(), driver)) f.list.push_back(std::move(finding));
}

// Whether root's daemon runs (by its uid and executable, never its name), and where it does, the
// command service's answer.
void check_daemon(const DoctorContext& ctx, const ImexConfig& config, const std::vector<std::string>& addresses,
                  Findings& f) {
    std::string unit_refused;
    const std::optional<bool> daemon = imex_daemon_running(ctx.options.sysroot, &unit_refused);
    if (!unit_refused.empty()) {
        f.add(false,
              fmt::format("{}: its ExecStart is not believed, only {} is taken for the daemon", unit_refused,
                          kImexDaemonPath),
              "make the unit file and the folders above it root's alone");
    }
    const bool running = daemon.value_or(false);
    if (daemon) f.details.running = running;
    if (!daemon) {
        // Not known here; the command service, where it is on, still says whether the daemon answers.
        f.add(false,
              "whether the IMEX daemon (nvidia-imex) runs is not known: only root may read which program "
              "root's processes run (/proc/PID/exe)",
              "run doctor as root");
        if (config.command_service()) ask_command_service(ctx, config, addresses, f);
    } else if (!running) {
        f.add(true, "the IMEX daemon (nvidia-imex) is not running",
              "start it: 'sudo systemctl enable --now nvidia-imex'; if it stops again, its reason is in "
              "/var/log/nvidia-imex.log ('journalctl -u nvidia-imex')");
    } else if (config.command_service()) {
        ask_command_service(ctx, config, addresses, f);
    }
}

}  // namespace

CheckOutcome check_imex_domain(DoctorContext& ctx, DeviceState*) {
    if (ctx.nvml == nullptr || !ctx.nvml->loaded()) {
        const std::string why = ctx.nvml == nullptr ? "NVML was not loaded" : ctx.nvml->info().error;
        return CheckOutcome::skip(
            fmt::format("no NVML to tell whether a GPU is attached to a multi-node NVLink fabric: {}", why));
    }
    int attached = 0;
    for (const auto& [uuid, fabric] : ctx.node_fabric()) attached += nvml::fabric_attached(fabric) ? 1 : 0;
    if (attached == 0) {
        return CheckOutcome::skip("not applicable: no GPU of this node is attached to a multi-node NVLink fabric");
    }
    const UnitState unit = imex_unit_state(ctx.options.sysroot);
    Findings f;
    f.details.attached_gpus = attached;
    f.details.unit = std::string(unit_state_name(unit));
    if (const std::string why = managed_externally(ctx, unit); !why.empty()) {
        f.details.managed_externally = why;
        return CheckOutcome::skip(
            fmt::format("IMEX managed externally: {}; only the channel (imex-channels) and the fabric (fabric) are "
                        "judged here",
                        why),
            std::move(f.details));
    }
    const std::string config_path = ctx.imex_config_path();
    std::string refused;
    const auto text = try_read_trusted_text(ctx.path(config_path), refused);
    f.details.config = config_path;
    if (!text) {
        f.add(true, refused.empty() ? fmt::format("the nvidia-imex unit is installed but its settings file {} cannot "
                                                  "be read",
                                                  config_path)
                                    : refused);
        return f.outcome(kServiceRemedy, "");
    }
    ImexConfig config = parse_imex_config(*text);
    config.path = config_path;
    const std::vector<std::string> addresses = local_addresses();
    check_files(ctx, config, addresses, f);
    check_daemon(ctx, config, addresses, f);
    f.details.command_service = config.command_service();
    const std::string domain = f.details.domain.value_or("");
    const std::string pass = !config.command_service()
                                 ? "the IMEX daemon runs and this node is in its node file; the command service is off "
                                   "(IMEX_CMD_ENABLED is not 1), so the domain was not asked"
                                 : fmt::format("the IMEX daemon is READY and the domain is {}{}", domain,
                                               domain == "UP" ? ", every node READY and connected" : "");
    return f.outcome(kServiceRemedy, pass);
}

}  // namespace cumemctl::doctor
