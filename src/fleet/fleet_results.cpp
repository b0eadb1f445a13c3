#include "fleet/fleet_results.hpp"

#include <algorithm>
#include <map>

#include "report/json_fields.hpp"
#include "util/hostlist.hpp"

namespace cumemctl::fleet {
namespace {

nlohmann::json node_json(const NodeSummary& n) {
    nlohmann::json j{{"host", n.host},
                     {"status", node_status_name(n.status)},
                     {"sources", n.sources},
                     {"commands", n.commands},
                     {"timestamp", text_or_null(n.timestamp)},
                     {"failed", n.failed},
                     {"warned", n.warned},
                     {"properties", *n.properties}};
    if (!n.error.empty()) j["error"] = n.error;
    nlohmann::json health = nlohmann::json::array();
    for (const auto& g : n.gpu_health) {
        health.push_back({{"device", g.device},
                          {"uuid", text_or_null(g.uuid)},
                          {"status", doctor::status_name(g.status)},
                          {"reason", text_or_null(g.reason)}});
    }
    j["gpu_health"] = std::move(health);
    nlohmann::json bandwidth = nlohmann::json::array();
    for (const auto& b : n.bandwidth) {
        bandwidth.push_back({{"device", b.device ? nlohmann::json(*b.device) : nlohmann::json(nullptr)},
                             {"uuid", text_or_null(b.uuid)},
                             {"path", b.path},
                             {"gbps", b.gbps}});
    }
    j["bandwidth"] = std::move(bandwidth);
    return j;
}

// Each path's median and the nodes far below it.
nlohmann::json bandwidth_json(const FleetSummary& s, double margin) {
    nlohmann::json medians = nlohmann::json::array();
    for (const auto& m : s.medians) {
        medians.push_back({{"path", m.path},
                           {"limit_gbps", m.limit_gbps ? nlohmann::json(*m.limit_gbps) : nlohmann::json(nullptr)},
                           {"median_gbps", m.gbps},
                           {"nodes", m.nodes}});
    }
    nlohmann::json slow = nlohmann::json::array();
    for (const auto& n : s.slow) {
        slow.push_back(
            {{"host", n.host},
             {"path", n.path},
             {"device", n.slowest.device ? nlohmann::json(*n.slowest.device) : nlohmann::json(nullptr)},
             {"uuid", text_or_null(n.slowest.uuid)},
             {"gbps", n.slowest.gbps},
             {"limit_gbps", n.slowest.limit_gbps ? nlohmann::json(*n.slowest.limit_gbps) : nlohmann::json(nullptr)},
             {"median_gbps", n.median},
             {"below_median", 1 - n.slowest.gbps / n.median}});
    }
    return {{"slow_margin", margin}, {"medians", std::move(medians)}, {"slow", std::move(slow)}};
}

// Every failing check of every node, and every missing or stale node, worst first: what a script
// drains or an operator looks at, with the GPU's UUID and bus id.
nlohmann::json failures_json(const FleetSummary& s) {
    std::vector<const NodeSummary*> nodes;
    for (const auto& n : s.nodes) {
        if (node_fails(n.status)) nodes.push_back(&n);
    }
    std::stable_sort(nodes.begin(), nodes.end(), [](const NodeSummary* a, const NodeSummary* b) {
        return node_severity(a->status) > node_severity(b->status);
    });
    nlohmann::json out = nlohmann::json::array();
    for (const NodeSummary* n : nodes) {
        if (n->failures.empty()) {
            out.push_back({{"host", n->host},
                           {"status", node_status_name(n->status)},
                           {"check", nullptr},
                           {"device", nullptr},
                           {"uuid", nullptr},
                           {"pci_bus_id", nullptr},
                           {"nvml_index", nullptr},
                           {"reason", text_or_null(n->error)},
                           {"remedy", nullptr}});
            continue;
        }
        for (const auto& f : n->failures) {
            out.push_back({{"host", n->host},
                           {"status", doctor::status_name(f.status)},
                           {"check", f.check},
                           {"device", f.device ? nlohmann::json(*f.device) : nlohmann::json(nullptr)},
                           {"uuid", text_or_null(f.uuid)},
                           {"pci_bus_id", text_or_null(f.pci_bus_id)},
                           {"nvml_index", f.nvml_index ? nlohmann::json(*f.nvml_index) : nlohmann::json(nullptr)},
                           {"reason", text_or_null(f.reason)},
                           {"remedy", text_or_null(f.remedy)}});
        }
    }
    return out;
}

nlohmann::json summary_json(const FleetSummary& s, int inputs) {
    std::map<std::string, int> counts;
    for (const NodeStatus status : node_statuses_worst_first()) counts[std::string(node_status_name(status))] = 0;
    nlohmann::json nodes = nlohmann::json::array();
    for (const auto& n : s.nodes) {
        ++counts[std::string(node_status_name(n.status))];
        nodes.push_back(node_json(n));
    }
    nlohmann::json checks = nlohmann::json::array();
    for (const auto& c : s.checks) {
        checks.push_back(
            {{"check", c.check}, {"fail", c.failing}, {"warn", c.warning}, {"remedy", text_or_null(c.remedy)}});
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
            {"failures", failures_json(s)},
            {"failing_nodes", failing_nodes(s)},
            {"differences", std::move(diffs)}};
}

}  // namespace

std::string failing_nodes(const FleetSummary& s) {
    std::vector<std::string> hosts;
    for (const auto& n : s.nodes) {
        if (node_fails(n.status)) hosts.push_back(n.host);
    }
    return compress_hostlist(hosts);
}

nlohmann::json FleetResults::to_json() const {
    nlohmann::json j = summary_json(summary, inputs);
    j["bandwidth"] = bandwidth_json(summary, slow_margin);
    nlohmann::json matrices = nlohmann::json::array();
    for (const auto& m : fabric_matrices) matrices.push_back(matrix::to_json(m));
    j["fabric_matrices"] = std::move(matrices);
    nlohmann::json bad = nlohmann::json::array();
    for (const auto& p : input_problems) bad.push_back({{"source", p.source}, {"message", p.message}});
    j["input_problems"] = std::move(bad);
    return j;
}

}  // namespace cumemctl::fleet
