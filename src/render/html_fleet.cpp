// The fleet page: counts per status, the failing checks with their nodes (as Slurm host lists) and
// remedies, the nodes that differ from the majority, each GPU's memory health, and each fabric-matrix
// run among the reports.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/verdict.hpp"
#include "fleet/node_status.hpp"
#include "report/fleet_properties.hpp"
#include "render/html_pages.hpp"
#include "report/html_parts.hpp"
#include "util/hostlist.hpp"

namespace cumemctl::html {
namespace {

using fleet::FleetSummary;
using fleet::NodeStatus;

void write_statuses(std::ostream& out, const FleetSummary& s) {
    std::map<NodeStatus, std::vector<std::string>> by_status;
    for (const auto& n : s.nodes) by_status[n.status].push_back(n.host);
    out << "<h2>Nodes</h2>\n<p class=\"statuses\">";
    for (const NodeStatus status : fleet::node_statuses_worst_first()) {
        const auto it = by_status.find(status);
        const std::size_t count = it == by_status.end() ? 0 : it->second.size();
        out << fmt::format("<span class=\"status {0}\" data-status=\"{0}\" data-count=\"{1}\">{1} {0}</span>",
                           fleet::node_status_name(status), count);
    }
    out << fmt::format("</p>\n<p class=\"note\">{} nodes from {} reports.</p>\n", s.nodes.size(), s.reports);
    // The nodes that did not pass, failures first, as host lists.
    out << "<table class=\"node-status\"><tr><th>status</th><th>nodes</th></tr>\n";
    for (const NodeStatus status : fleet::node_statuses_worst_first()) {
        const auto it = by_status.find(status);
        if (it == by_status.end()) continue;
        out << fmt::format("<tr><td class=\"{0}\">{0}</td><td>{1}: {2}</td></tr>\n", fleet::node_status_name(status),
                           it->second.size(), escape(compress_hostlist(it->second)));
    }
    out << "</table>\n";
}

void write_checks(std::ostream& out, const FleetSummary& s) {
    if (s.checks.empty()) return;
    out << "<h2>Checks that did not pass</h2>\n<table class=\"checks\"><tr><th>check</th><th>fail</th><th>warn</th>"
           "<th>remedy</th></tr>\n";
    for (const auto& c : s.checks) {
        const auto& fail = c.failing;
        const auto& warn = c.warning;
        out << fmt::format("<tr><td>{}</td><td class=\"{}\">{}</td><td>{}</td><td>{}</td></tr>\n", escape(c.check),
                           fail.empty() ? "" : "fail",
                           fail.empty() ? "-" : fmt::format("{} ({})", escape(compress_hostlist(fail)), fail.size()),
                           warn.empty() ? "-" : fmt::format("{} ({})", escape(compress_hostlist(warn)), warn.size()),
                           escape(c.remedy));
    }
    out << "</table>\n";
}

void write_differences(std::ostream& out, const FleetSummary& s) {
    if (s.differences.empty()) return;
    out << "<h2>Nodes that differ from the majority</h2>\n<table class=\"differences\"><tr><th>property</th>"
           "<th>majority</th><th>nodes that differ</th></tr>\n";
    for (const auto& d : s.differences) {
        std::map<std::string, std::vector<std::string>> by_value;
        for (const auto& [host, value] : d.differing) by_value[value].push_back(host);
        std::string cells;
        for (const auto& [value, hosts] : by_value) {
            cells += fmt::format("{}<b>{}</b>: {}", cells.empty() ? "" : "<br>", escape(value),
                                 escape(compress_hostlist(hosts)));
        }
        out << fmt::format("<tr><td>{}</td><td>{} ({} of {})</td><td>{}</td></tr>\n",
                           escape(fleet_property_name(d.property)),
                           d.majority.empty() ? "none (a tie)" : escape(d.majority), d.majority_nodes, d.nodes, cells);
    }
    out << "</table>\n";
}

void write_gpu_health(std::ostream& out, const FleetSummary& s) {
    std::map<std::string, int> counts;  // by the status's name, as the page lists them
    int total = 0;
    std::vector<std::string> rows;
    for (const auto& n : s.nodes) {
        for (const auto& g : n.gpu_health) {
            const std::string status(status_name(g.status));
            ++counts[status];
            ++total;
            if (g.status == CheckStatus::pass) continue;
            rows.push_back(fmt::format(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"{}\">{}</td><td>{}</td></tr>\n", escape(n.host),
                g.device, escape(g.uuid.str()), escape(status), escape(status), escape(g.reason.str())));
        }
    }
    if (counts.empty()) return;
    std::string summary;
    for (const auto& [status, count] : counts)
        summary += fmt::format("{}{} {}", summary.empty() ? "" : ", ", count, status);
    out << fmt::format("<h2>GPU memory health</h2>\n<p>{} GPUs: {}.</p>\n", total, escape(summary));
    if (rows.empty()) return;
    out << "<table "
           "class=\"gpu-health\"><tr><th>node</th><th>GPU</th><th>UUID</th><th>status</th><th>reason</th></tr>\n";
    for (const auto& row : rows) out << row;
    out << "</table>\n";
}

}  // namespace

void write_fleet(std::ostream& out, const fleet::FleetResults& r) {
    // Reports of fabric-matrix ranks alone make no node: then the page is their matrices.
    if (!r.summary.nodes.empty() || r.fabric_matrices.empty()) write_statuses(out, r.summary);
    write_checks(out, r.summary);
    write_differences(out, r.summary);
    write_gpu_health(out, r.summary);
    for (const auto& problem : r.input_problems) {
        out << fmt::format("<p class=\"status error\">{}: {}</p>\n", escape(problem.source), escape(problem.message));
    }
    for (const auto& m : r.fabric_matrices) write_matrix(out, m);
}

}  // namespace cumemctl::html
