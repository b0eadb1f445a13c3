// fleet's views for people (FleetResults::tables): the nodes that did not pass, the checks and the
// differences across the fleet, the slow nodes, and the fabric matrices; and its drain list.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "base/enum_words.hpp"
#include "fleet/fleet_results.hpp"
#include "matrix/matrix_results.hpp"
#include "report/fleet_properties.hpp"
#include "util/hostlist.hpp"

namespace cumemctl::fleet {
namespace {

std::string joined(const std::vector<std::string>& items, const char* none = "-") {
    return items.empty() ? none : fmt::format("{}", fmt::join(items, ", "));
}

// The nodes far below the fleet's median of a path, slowest first.
Table slow_table(const FleetSummary& s, double margin) {
    Table t{fmt::format("Nodes more than {:g}% below the fleet's median bandwidth", 100 * margin),
            {"node", "path", "GPU", "GB/s", "median", "below"},
            {},
            {}};
    for (const auto& n : s.slow) {
        t.rows.push_back({n.host, n.path, n.slowest.device ? std::to_string(*n.slowest.device) : "-",
                          fmt::format("{:.1f}", n.slowest.gbps), fmt::format("{:.1f}", n.median),
                          fmt::format("{:.0f}%", 100 * (1 - n.slowest.gbps / n.median))});
    }
    t.notes.push_back(
        "a node's slowest GPU on each path, from doctor's host-bandwidth and memory-bandwidth, against the median "
        "of the nodes whose path has the same limit (h2d_all, d2h_all: the node's sum with every GPU at once); a "
        "job over the fleet waits on its slowest node: compare it with 'cumemctl bandwidth --concurrent' there");
    return t;
}

// How the title counts nodes of a status: "2 failed".
constexpr auto kNodeCountWords = enum_words<NodeStatus>({{NodeStatus::fail, "failed"},
                                                         {NodeStatus::timeout, "out of time"},
                                                         {NodeStatus::error, "with errors"},
                                                         {NodeStatus::missing, "missing"},
                                                         {NodeStatus::stale, "with a report too old"},
                                                         {NodeStatus::busy, "busy"},
                                                         {NodeStatus::warn, "warned"},
                                                         {NodeStatus::pass, "passed"},
                                                         {NodeStatus::unknown, "without a doctor report"}},
                                                        "without a doctor report");

std::string_view node_count_word(NodeStatus status) {
    return kNodeCountWords.word(status);
}

// How a terminal colours a node's status: fails of the fleet red, warned and busy yellow, passed green.
Tone node_tone(NodeStatus status) {
    if (node_fails(status)) return Tone::bad;
    switch (status) {
        case NodeStatus::pass:
            return Tone::good;
        case NodeStatus::warn:
        case NodeStatus::busy:
        case NodeStatus::unknown:
            return Tone::attention;
        default:
            return Tone::plain;
    }
}

std::string title(const FleetSummary& s) {
    std::map<NodeStatus, int> counts;
    for (const auto& n : s.nodes) ++counts[n.status];
    std::vector<std::string> parts;
    for (const NodeStatus status : node_statuses_worst_first()) {
        if (counts[status] > 0) parts.push_back(fmt::format("{} {}", counts[status], node_count_word(status)));
    }
    return fmt::format("cumemctl fleet: {} node{} ({}), {} report{}", s.nodes.size(), s.nodes.size() == 1 ? "" : "s",
                       joined(parts, "none"), s.reports, s.reports == 1 ? "" : "s");
}

// What did not pass on a node, for its row: the error, the failed and the warned checks.
std::string not_passed(const NodeSummary& n) {
    std::vector<std::string> parts;
    if (n.status == NodeStatus::missing) parts.emplace_back("no report");
    if (n.status == NodeStatus::stale) parts.emplace_back("report too old");
    if (n.status != NodeStatus::missing && n.status != NodeStatus::stale && !n.error.empty()) parts.push_back(n.error);
    // A check that failed on every GPU is one item: "fabric-alloc@gpu[0-7]".
    if (!n.failed.empty()) parts.push_back("fail: " + joined(compress_hostlist_items(n.failed)));
    if (!n.warned.empty()) parts.push_back("warn: " + joined(compress_hostlist_items(n.warned)));
    return parts.empty() ? "-" : fmt::format("{}", fmt::join(parts, "; "));
}

// "gpu217: memory-health on nvidia1 (GPU-..., 00000000:5B:00.0): row remap failed": a failure, its GPU
// named as operators name it (nvidia-smi's index, the UUID and the bus id).
std::string failure_line(const std::string& host, const CheckFailure& f) {
    std::string gpu;
    if (f.device) {
        const std::string name = gpu_name_of(f);
        std::vector<std::string> names;
        if (!f.uuid.empty()) names.push_back(f.uuid);
        if (!f.pci_bus_id.empty() && f.pci_bus_id != name) names.push_back(f.pci_bus_id);
        gpu = fmt::format(" on {}{}", name, names.empty() ? "" : fmt::format(" ({})", fmt::join(names, ", ")));
    }
    return fmt::format("{}: {}{}{}: {}", host, f.check, gpu,
                       f.status == doctor::CheckStatus::timeout ? " (timeout)" : "", f.reason);
}

// The nodes that did not pass, worst first, nodes alike (status, driver, GPUs, what did not pass) in one
// row with their names compressed as Slurm writes them; the failures with their GPUs below; the passing
// nodes as one host list.
Table nodes_table(const FleetSummary& s) {
    struct Group {
        NodeStatus status;
        std::vector<std::string> key;  // driver, gpus, what did not pass
        std::vector<const NodeSummary*> nodes;
    };
    std::vector<Group> groups;
    std::map<std::pair<NodeStatus, std::vector<std::string>>, std::size_t> group_of;
    std::vector<std::string> passing;
    for (const auto& n : s.nodes) {
        if (n.status == NodeStatus::pass) {
            passing.push_back(n.host);
            continue;
        }
        auto prop = [&](const FleetProperty& p) {
            const auto it = n.properties->find(std::string(p.key));
            return it == n.properties->end() ? std::string(n.status == NodeStatus::missing ? "-" : "?") : it->second;
        };
        std::vector<std::string> key{prop(kFleetDriver), prop(kFleetGpus), not_passed(n)};
        const auto [it, added] = group_of.try_emplace({n.status, key}, groups.size());
        if (added) groups.push_back(Group{n.status, std::move(key), {}});
        groups[it->second].nodes.push_back(&n);
    }
    std::stable_sort(groups.begin(), groups.end(),
                     [](const Group& a, const Group& b) { return node_severity(a.status) > node_severity(b.status); });
    Table t{
        title(s),
        {"node", "status", std::string(kFleetDriver.name), std::string(kFleetGpus.name), "checks that did not pass"},
        {},
        {},
        true};
    for (const auto& g : groups) {
        std::vector<std::string> hosts;
        for (const NodeSummary* n : g.nodes) hosts.push_back(n->host);
        t.rows.push_back({compress_hostlist(hosts),
                          {std::string(node_status_name(g.status)), node_tone(g.status)},
                          g.key[0],
                          g.key[1],
                          g.key[2]});
    }
    if (t.rows.empty()) t.columns.clear();
    // Each failed check with its GPU, worst node first (--json lists them all).
    constexpr std::size_t kShown = 20;
    std::vector<std::string> lines;
    std::size_t count = 0;
    for (const auto& g : groups) {
        for (const NodeSummary* n : g.nodes) {
            for (const auto& f : n->failures) {
                if (++count <= kShown) lines.push_back(failure_line(n->host, f));
            }
            if (n->status == NodeStatus::stale && ++count <= kShown)
                lines.push_back(fmt::format("{}: {}", n->host, n->error));
        }
    }
    if (count > kShown) lines.push_back(fmt::format("... and {} more (--json lists every one)", count - kShown));
    if (!lines.empty()) t.notes.emplace_back("");
    for (auto& l : lines) t.notes.push_back(std::move(l));
    if (!passing.empty()) t.notes.push_back(fmt::format("passed every check: {}", compress_hostlist(passing)));
    return t;
}

void add_tables(std::vector<Table>& tables, const FleetSummary& s) {
    tables.push_back(nodes_table(s));
    if (!s.checks.empty()) {
        std::vector<const CheckSpread*> order;
        for (const auto& c : s.checks) order.push_back(&c);
        std::stable_sort(order.begin(), order.end(), [](const CheckSpread* a, const CheckSpread* b) {
            return a->failing.size() > b->failing.size();
        });
        Table checks{"Checks that did not pass", {"check", "fail", "warn", "nodes"}, {}, {}, true};
        for (const CheckSpread* c : order) {
            std::vector<std::string> parts;
            if (!c->failing.empty()) parts.push_back("fail: " + compress_hostlist(c->failing));
            if (!c->warning.empty()) parts.push_back("warn: " + compress_hostlist(c->warning));
            checks.rows.push_back({c->check, std::to_string(c->failing.size()), std::to_string(c->warning.size()),
                                   fmt::format("{}", fmt::join(parts, "; "))});
        }
        for (const CheckSpread* c : order) {
            if (c->remedy.empty()) continue;
            if (checks.notes.empty()) checks.notes.emplace_back("");
            checks.notes.push_back(fmt::format("{}: {}", c->check, c->remedy));
        }
        tables.push_back(std::move(checks));
    }
    if (!s.differences.empty()) {
        Table diffs{"Differences from the majority", {"property", "majority", "nodes that differ"}, {}, {}, true};
        for (const auto& d : s.differences) {
            // The differing nodes by value: "gpu[005-007]: 12.4".
            std::vector<std::pair<std::string, std::vector<std::string>>> by_value;
            std::map<std::string_view, std::size_t> value_index;  // no search through every value seen
            for (const auto& [host, value] : d.differing) {
                const auto [it, added] = value_index.try_emplace(value, by_value.size());
                if (added) by_value.push_back({value, {}});
                by_value[it->second].second.push_back(host);
            }
            std::vector<std::string> items;
            for (const auto& [value, hosts] : by_value)
                items.push_back(fmt::format("{}: {}", compress_hostlist(hosts), value));
            diffs.rows.push_back({fleet_property_name(d.property),
                                  d.majority.empty()
                                      ? "none (a tie)"
                                      : fmt::format("{} ({} of {})", d.majority, d.majority_nodes, d.nodes),
                                  joined(items)});
        }
        tables.push_back(std::move(diffs));
    }
}

// The matrices of one report each (--local, --summary), a row each: those after the ranks' ones.
Table whole_matrices_table(const FleetResults& r, std::size_t rank_matrices) {
    Table whole{"Fabric matrices of one report each (--local, --summary)",
                {"source", "node", "mode", "pairs", "failed"},
                {},
                {}};
    for (std::size_t i = 0; i < r.whole_matrices.size(); ++i) {
        const matrix::Matrix& m = r.fabric_matrices[rank_matrices + i];
        const FleetResults::WholeMatrix& w = r.whole_matrices[i];
        whole.rows.push_back({w.source, w.host, w.mode, std::to_string(static_cast<long long>(m.ranks) * m.ranks),
                              std::to_string(m.failed_pairs)});
    }
    return whole;
}

}  // namespace

std::vector<Table> FleetResults::tables(const Report& /*report*/) const {
    std::vector<Table> tables;
    add_tables(tables, summary);
    if (!summary.slow.empty()) tables.push_back(slow_table(summary, slow_margin));
    // The ranks' matrices come first in fabric_matrices, the whole ones after them.
    const std::size_t rank_matrices = fabric_matrices.size() - whole_matrices.size();
    for (std::size_t i = 0; i < rank_matrices; ++i) {
        for (auto& t : matrix::matrix_tables(fabric_matrices[i])) tables.push_back(std::move(t));
    }
    if (!whole_matrices.empty()) tables.push_back(whole_matrices_table(*this, rank_matrices));
    return tables;
}

std::string FleetResults::nodelist() const {
    return failing_nodes(summary);
}

}  // namespace cumemctl::fleet
