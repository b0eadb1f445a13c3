// `cumemctl fleet FILE...`: one summary of many nodes' doctor and devices reports.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "command.hpp"
#include "commands.hpp"
#include "matrix/matrix.hpp"
#include "fleet/fleet.hpp"

namespace cumemctl::cmd {
namespace {

using namespace cumemctl::fleet;

struct FleetOptions {
    std::vector<std::string> inputs;
};

std::string joined(const std::vector<std::string>& items, const char* none = "-") {
    return items.empty() ? none : fmt::format("{}", fmt::join(items, ", "));
}

nlohmann::json node_json(const NodeSummary& n) {
    nlohmann::json j{{"host", n.host},         {"status", n.status},        {"sources", n.sources},
                     {"commands", n.commands}, {"timestamp", n.timestamp},  {"failed", n.failed},
                     {"warned", n.warned},     {"properties", n.properties}};
    if (!n.error.empty()) j["error"] = n.error;
    nlohmann::json health = nlohmann::json::array();
    for (const auto& g : n.gpu_health) {
        health.push_back({{"device", g.device}, {"uuid", g.uuid}, {"status", g.status}, {"reason", g.reason}});
    }
    j["gpu_health"] = std::move(health);
    return j;
}

nlohmann::json summary_json(const FleetSummary& s, int inputs) {
    std::map<std::string, int> counts{{"pass", 0}, {"warn", 0},  {"busy", 0},   {"timeout", 0},
                                      {"fail", 0}, {"error", 0}, {"unknown", 0}};
    nlohmann::json nodes = nlohmann::json::array();
    for (const auto& n : s.nodes) {
        ++counts[n.status];
        nodes.push_back(node_json(n));
    }
    nlohmann::json checks = nlohmann::json::array();
    for (const auto& c : s.checks) {
        checks.push_back({{"check", c.check},
                          {"fail", c.failing},
                          {"warn", c.warning},
                          {"remedy", c.remedy.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.remedy)}});
    }
    nlohmann::json diffs = nlohmann::json::array();
    for (const auto& d : s.differences) {
        nlohmann::json differing = nlohmann::json::array();
        for (const auto& [host, value] : d.differing) differing.push_back({{"host", host}, {"value", value}});
        diffs.push_back({{"property", d.property},
                         {"majority", d.majority.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.majority)},
                         {"majority_nodes", d.majority_nodes},
                         {"nodes", d.nodes},
                         {"differing", std::move(differing)}});
    }
    return {{"inputs", inputs},
            {"reports", s.reports},
            {"node_count", s.nodes.size()},
            {"statuses", counts},
            {"nodes", std::move(nodes)},
            {"checks", std::move(checks)},
            {"differences", std::move(diffs)}};
}

std::string title(const FleetSummary& s) {
    std::map<std::string, int> counts;
    for (const auto& n : s.nodes) ++counts[n.status];
    std::vector<std::string> parts;
    for (const char* status : {"fail", "timeout", "error", "busy", "warn", "pass", "unknown"}) {
        const char* word = std::string_view(status) == "fail"      ? "failed"
                           : std::string_view(status) == "timeout" ? "out of time"
                           : std::string_view(status) == "busy"    ? "busy"
                           : std::string_view(status) == "warn"    ? "warned"
                           : std::string_view(status) == "pass"    ? "passed"
                           : std::string_view(status) == "error"   ? "with errors"
                                                                   : "without a doctor report";
        if (counts[status] > 0) parts.push_back(fmt::format("{} {}", counts[status], word));
    }
    return fmt::format("cumemctl fleet: {} node{} ({}), {} report{}", s.nodes.size(), s.nodes.size() == 1 ? "" : "s",
                       joined(parts, "none"), s.reports, s.reports == 1 ? "" : "s");
}

void add_tables(Report& report, const FleetSummary& s) {
    Table nodes{title(s), {"node", "status", "driver", "gpus", "checks that did not pass"}, {}, {}, true};
    std::vector<std::string> passing;
    for (const auto& n : s.nodes) {
        if (n.status == "pass") {
            passing.push_back(n.host);
            continue;
        }
        std::string checks = n.error;
        if (!n.failed.empty()) checks = "fail: " + joined(n.failed);
        if (!n.warned.empty()) checks += (checks.empty() ? "" : "; ") + std::string("warn: ") + joined(n.warned);
        auto prop = [&](const char* key) {
            const auto it = n.properties.find(key);
            return it == n.properties.end() ? std::string("?") : it->second;
        };
        nodes.rows.push_back({n.host, n.status, prop("driver"), prop("gpus"), checks.empty() ? "-" : checks});
    }
    if (nodes.rows.empty()) nodes.columns.clear();
    if (!passing.empty()) nodes.notes.push_back(fmt::format("passed every check: {}", joined(passing)));
    report.tables.push_back(std::move(nodes));
    if (!s.checks.empty()) {
        Table checks{"Checks that did not pass", {"check", "fail", "warn", "nodes"}, {}, {}, true};
        for (const auto& c : s.checks) {
            std::vector<std::string> hosts = c.failing;
            for (const auto& h : c.warning) hosts.push_back(h + " (warn)");
            checks.rows.push_back(
                {c.check, std::to_string(c.failing.size()), std::to_string(c.warning.size()), joined(hosts)});
        }
        report.tables.push_back(std::move(checks));
    }
    if (!s.differences.empty()) {
        Table diffs{"Differences from the majority", {"property", "majority", "nodes that differ"}, {}, {}, true};
        for (const auto& d : s.differences) {
            std::vector<std::string> items;
            for (const auto& [host, value] : d.differing) items.push_back(fmt::format("{}: {}", host, value));
            diffs.rows.push_back({d.property,
                                  d.majority.empty()
                                      ? "none (a tie)"
                                      : fmt::format("{} ({} of {})", d.majority, d.majority_nodes, d.nodes),
                                  joined(items)});
        }
        report.tables.push_back(std::move(diffs));
    }
}

// The matrix of every fabric-matrix run whose ranks' reports are among the inputs.
void add_fabric_matrices(Report& report, const std::vector<SourcedReport>& reports) {
    std::vector<nlohmann::json> docs;
    for (const auto& r : reports) docs.push_back(r.report);
    nlohmann::json out = nlohmann::json::array();
    for (const auto& input : matrix::inputs_from_reports(docs)) {
        const matrix::Matrix m = matrix::build_matrix(input);
        out.push_back(matrix::to_json(m));
        for (auto& t : matrix::matrix_tables(m)) report.tables.push_back(std::move(t));
        if (!m.passed()) report.mark_failed();
    }
    report.results["fabric_matrices"] = std::move(out);
}

Report run_fleet(const FleetOptions& opts) {
    return run_guarded("fleet", [&](Report& report) {
        std::vector<InputProblem> problems;
        std::vector<SourcedReport> reports;
        for (const auto& path : opts.inputs) {
            std::vector<SourcedReport> got;
            if (path == "-") {
                got = read_reports(std::cin, "-", problems);
            } else {
                std::ifstream in(path);
                if (!in) {
                    problems.push_back({path, fmt::format("cannot read it: {}", std::strerror(errno))});
                    continue;
                }
                got = read_reports(in, path, problems);
            }
            for (auto& r : got) reports.push_back(std::move(r));
        }
        const FleetSummary summary = summarise(reports);
        report.results = summary_json(summary, static_cast<int>(opts.inputs.size()));
        nlohmann::json bad = nlohmann::json::array();
        for (const auto& p : problems) bad.push_back({{"source", p.source}, {"message", p.message}});
        report.results["input_problems"] = std::move(bad);
        add_tables(report, summary);
        for (const auto& p : problems) {
            report.add_error(Problem{.exit_code = ExitCode::failed,
                                     .message = fmt::format("{}: {}", p.source, p.message),
                                     .remedy = "give files that hold the output of 'cumemctl doctor --json' or "
                                               "'cumemctl devices --json' (one or more reports each)"});
        }
        if (reports.empty() && problems.empty()) {
            report.add_error(Problem{.exit_code = ExitCode::failed,
                                     .message = "no report to summarise",
                                     .remedy = "give at least one report file"});
        }
        add_fabric_matrices(report, reports);
        if (any_failing(summary)) report.mark_failed();
    });
}

}  // namespace

void register_fleet(CLI::App& root, const Globals&, Runner& runner) {
    auto opts = std::make_shared<FleetOptions>();
    CLI::App* app = root.add_subcommand(
        "fleet", "summarise many nodes' doctor, devices and fabric-matrix reports (JSON files, - for stdin)");
    app->add_option("reports", opts->inputs,
                    "report files (JSON from --json; several in one file are fine), - for stdin")
        ->required()
        ->type_name("FILE");
    app->callback([opts, &runner] { runner = [opts] { return run_fleet(*opts); }; });
}

}  // namespace cumemctl::cmd
