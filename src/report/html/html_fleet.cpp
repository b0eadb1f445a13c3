// The fleet page: counts per status, the failing checks with their nodes (as Slurm host lists) and
// remedies, the nodes that differ from the majority, each GPU's memory health, and each fabric-matrix
// run among the reports.
#include <algorithm>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "base/verdict.hpp"
#include "report/fleet_properties.hpp"
#include "report/html_parts.hpp"
#include "report/json_fields.hpp"
#include "util/hostlist.hpp"

namespace cumemctl::html {
namespace {

std::vector<std::string> strings(const nlohmann::json& list) {
    std::vector<std::string> out;
    if (!list.is_array()) return out;
    for (const auto& s : list) {
        if (s.is_string()) out.push_back(s.get<std::string>());
    }
    return out;
}

// `node_statuses`, then any other status the counts or the nodes name.
std::vector<std::string> statuses_in_order(const nlohmann::json& r, std::vector<std::string> node_statuses) {
    const auto add = [&](const std::string& status) {
        if (std::find(node_statuses.begin(), node_statuses.end(), status) == node_statuses.end())
            node_statuses.push_back(status);
    };
    const auto counts = r.value("statuses", nlohmann::json::object());
    for (const auto& item : counts.items()) add(item.key());
    for (const auto& n : r.value("nodes", nlohmann::json::array())) add(n.value("status", "unknown"));
    return node_statuses;
}

void write_statuses(std::ostream& out, const nlohmann::json& r, const std::vector<std::string>& statuses) {
    out << "<h2>Nodes</h2>\n<p class=\"statuses\">";
    const auto counts = r.value("statuses", nlohmann::json::object());
    for (const auto& status : statuses) {
        const int count = counts.value(status, 0);
        out << fmt::format("<span class=\"status {0}\" data-status=\"{0}\" data-count=\"{1}\">{1} {0}</span>",
                           escape(status), count);
    }
    out << fmt::format("</p>\n<p class=\"note\">{} nodes from {} reports.</p>\n", r.value("node_count", 0),
                       r.value("reports", 0));
    // The nodes that did not pass, failures first, as host lists.
    std::map<std::string, std::vector<std::string>> by_status;
    for (const auto& n : r.value("nodes", nlohmann::json::array())) {
        by_status[n.value("status", "unknown")].push_back(n.value("host", "?"));
    }
    out << "<table class=\"node-status\"><tr><th>status</th><th>nodes</th></tr>\n";
    for (const auto& status : statuses) {
        const auto it = by_status.find(status);
        if (it == by_status.end()) continue;
        out << fmt::format("<tr><td class=\"{0}\">{0}</td><td>{1}: {2}</td></tr>\n", escape(status), it->second.size(),
                           escape(compress_hostlist(it->second)));
    }
    out << "</table>\n";
}

void write_checks(std::ostream& out, const nlohmann::json& r) {
    const auto checks = r.value("checks", nlohmann::json::array());
    if (checks.empty()) return;
    out << "<h2>Checks that did not pass</h2>\n<table class=\"checks\"><tr><th>check</th><th>fail</th><th>warn</th>"
           "<th>remedy</th></tr>\n";
    for (const auto& c : checks) {
        const auto fail = strings(c.value("fail", nlohmann::json::array()));
        const auto warn = strings(c.value("warn", nlohmann::json::array()));
        const auto remedy = c.value("remedy", nlohmann::json());
        out << fmt::format("<tr><td>{}</td><td class=\"{}\">{}</td><td>{}</td><td>{}</td></tr>\n",
                           escape(c.value("check", "?")), fail.empty() ? "" : "fail",
                           fail.empty() ? "-" : fmt::format("{} ({})", escape(compress_hostlist(fail)), fail.size()),
                           warn.empty() ? "-" : fmt::format("{} ({})", escape(compress_hostlist(warn)), warn.size()),
                           remedy.is_string() ? escape(remedy.get<std::string>()) : "");
    }
    out << "</table>\n";
}

void write_differences(std::ostream& out, const nlohmann::json& r) {
    const auto diffs = r.value("differences", nlohmann::json::array());
    if (diffs.empty()) return;
    out << "<h2>Nodes that differ from the majority</h2>\n<table class=\"differences\"><tr><th>property</th>"
           "<th>majority</th><th>nodes that differ</th></tr>\n";
    for (const auto& d : diffs) {
        std::map<std::string, std::vector<std::string>> by_value;
        for (const auto& h : d.value("differing", nlohmann::json::array())) {
            by_value[h.value("value", "?")].push_back(h.value("host", "?"));
        }
        std::string cells;
        for (const auto& [value, hosts] : by_value) {
            cells += fmt::format("{}<b>{}</b>: {}", cells.empty() ? "" : "<br>", escape(value),
                                 escape(compress_hostlist(hosts)));
        }
        const auto majority = d.value("majority", nlohmann::json());
        out << fmt::format("<tr><td>{}</td><td>{} ({} of {})</td><td>{}</td></tr>\n",
                           escape(fleet_property_name(d.value("property", "?"))),
                           majority.is_string() ? escape(majority.get<std::string>()) : "none (a tie)",
                           d.value("majority_nodes", 0), d.value("nodes", 0), cells);
    }
    out << "</table>\n";
}

void write_gpu_health(std::ostream& out, const nlohmann::json& r) {
    std::map<std::string, int> counts;
    std::vector<std::string> rows;
    for (const auto& n : r.value("nodes", nlohmann::json::array())) {
        for (const auto& g : n.value("gpu_health", nlohmann::json::array())) {
            const std::string status = g.value("status", "?");
            ++counts[status];
            if (parse_status(status) == CheckStatus::pass) continue;  // an unreadable word is listed
            rows.push_back(
                fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"{}\">{}</td><td>{}</td></tr>\n",
                            escape(n.value("host", "?")), g.value("device", -1), escape(json_text(g, "uuid")),
                            escape(status), escape(status), escape(json_text(g, "reason"))));
        }
    }
    if (counts.empty()) return;
    std::string summary;
    for (const auto& [status, count] : counts)
        summary += fmt::format("{}{} {}", summary.empty() ? "" : ", ", count, status);
    out << fmt::format(
        "<h2>GPU memory health</h2>\n<p>{} GPUs: {}.</p>\n",
        [&] {
            int total = 0;
            for (const auto& [s, c] : counts) total += c;
            return total;
        }(),
        escape(summary));
    if (rows.empty()) return;
    out << "<table "
           "class=\"gpu-health\"><tr><th>node</th><th>GPU</th><th>UUID</th><th>status</th><th>reason</th></tr>\n";
    for (const auto& row : rows) out << row;
    out << "</table>\n";
}

}  // namespace

void write_fleet(std::ostream& out, const nlohmann::json& r, const std::vector<std::string>& node_statuses) {
    // Reports of fabric-matrix ranks alone make no node: then the page is their matrices.
    if (r.value("node_count", 0) > 0 || r.value("fabric_matrices", nlohmann::json::array()).empty())
        write_statuses(out, r, statuses_in_order(r, node_statuses));
    write_checks(out, r);
    write_differences(out, r);
    write_gpu_health(out, r);
    for (const auto& problem : r.value("input_problems", nlohmann::json::array())) {
        out << fmt::format("<p class=\"status error\">{}: {}</p>\n", escape(problem.value("source", "?")),
                           escape(problem.value("message", "")));
    }
    for (const auto& m : r.value("fabric_matrices", nlohmann::json::array())) write_matrix(out, m);
}

}  // namespace cumemctl::html
