#include "fleet/fleet.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include "report/fleet_properties.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "doctor/check.hpp"
#include "fleet/interned.hpp"
#include "report/gpu_name.hpp"
#include "util/duration.hpp"
#include "util/host.hpp"

namespace cumemctl::fleet {
namespace {

std::vector<Difference> differences(const std::vector<NodeSummary>& nodes) {
    // property -> value -> hosts (pointers to the nodes' own names: no copy of a name per property)
    std::map<std::string_view, std::map<std::string_view, std::vector<const std::string*>>> by_property;
    for (const auto& n : nodes) {
        for (const auto& [property, value] : *n.properties) by_property[property][value].push_back(&n.host);
    }
    std::vector<Difference> out;
    for (const auto& [property, values] : by_property) {
        if (values.size() < 2) continue;
        Difference d;
        d.property = std::string(property);
        int second = 0;
        for (const auto& [value, hosts] : values) {
            const int n = static_cast<int>(hosts.size());
            d.nodes += n;
            if (n > d.majority_nodes) {
                second = d.majority_nodes;
                d.majority_nodes = n;
                d.majority = std::string(value);
            } else {
                second = std::max(second, n);
            }
        }
        if (second == d.majority_nodes) d.majority.clear();  // a tie: no majority
        for (const auto& [value, hosts] : values) {
            if (!d.majority.empty() && value == d.majority) continue;
            for (const std::string* h : hosts) d.differing.emplace_back(*h, value);
        }
        std::sort(d.differing.begin(), d.differing.end());
        out.push_back(std::move(d));
    }
    // The node-wide properties first, then the capabilities (each group in name order).
    std::stable_sort(out.begin(), out.end(), [](const Difference& a, const Difference& b) {
        return is_fleet_capability(a.property) < is_fleet_capability(b.property);
    });
    return out;
}

// Marks the nodes whose report is older than the age allowed, or whose report's time cannot be read,
// stale, and adds the expected nodes that sent nothing as missing; the nodes stay sorted by host.
void judge_expectations(FleetSummary& s, const Expectations& expect) {
    if (expect.max_age_seconds) {
        const std::string allowed = expect.max_age_name.empty()
                                        ? fmt::format("the {} allowed", format_age(*expect.max_age_seconds))
                                        : expect.max_age_name;
        for (auto& n : s.nodes) {
            if (n.status == NodeStatus::error || n.status == NodeStatus::missing) continue;
            const auto when = parse_utc_timestamp(n.timestamp);
            const double age = when ? age_seconds(expect.now, *when) : 0;
            if (when && age <= *expect.max_age_seconds) continue;
            n.status = NodeStatus::stale;
            n.error =
                when ? fmt::format("its report is from {}, {} ago, more than {}", n.timestamp, format_age(age), allowed)
                     : fmt::format("its report has no time that can be read: it may be older than {}", allowed);
        }
    }
    std::set<std::string_view> seen;
    for (const auto& n : s.nodes) seen.insert(n.host);
    std::vector<NodeSummary> missing;
    for (const auto& host : expect.hosts) {
        if (seen.count(host) != 0) continue;
        seen.insert(host);
        NodeSummary m;
        m.host = host;
        m.status = NodeStatus::missing;
        m.error = "no report from this node";
        missing.push_back(std::move(m));
    }
    for (auto& m : missing) s.nodes.push_back(std::move(m));
    std::sort(s.nodes.begin(), s.nodes.end(),
              [](const NodeSummary& a, const NodeSummary& b) { return a.host < b.host; });
}

// Each check that did not pass with the nodes where it failed or warned, in order of first appearance
// (found by name in a map: a report of many distinct checks costs no search through them all).
void spread_checks(FleetSummary& s) {
    std::map<std::string, std::size_t, std::less<>> index;
    for (const auto& n : s.nodes) {
        auto spread = [&](const std::vector<std::string>& names, bool failing) {
            for (const auto& name : names) {
                const std::string_view check = std::string_view(name).substr(0, name.find('@'));
                auto found = index.find(check);
                if (found == index.end()) {
                    found = index.emplace(std::string(check), s.checks.size()).first;
                    s.checks.push_back(CheckSpread{std::string(check), {}, {}, {}});
                }
                CheckSpread& it = s.checks[found->second];
                if (const auto r = n.remedies.find(it.check); it.remedy.empty() && r != n.remedies.end())
                    it.remedy = r->second;
                auto& hosts = failing ? it.failing : it.warning;
                if (hosts.empty() || hosts.back() != n.host) hosts.push_back(n.host);  // nodes come one at a time
            }
        };
        spread(n.failed, true);
        spread(n.warned, false);
    }
}

// Each path's median over the nodes that measured it against one limit (a node's slowest GPU counts),
// and the nodes below it by more than the margin: a fleet of two GPU models or two kinds of link is
// compared within each, never one kind against the other. Nodes that are an error, stale or missing
// take no part.
void find_slow(FleetSummary& s, double margin) {
    using PathKey = std::pair<std::string, long long>;  // the path, and its limit in MB/s (-1: unknown)
    std::map<PathKey, std::vector<std::pair<const NodeSummary*, const GpuBandwidth*>>> by_path;
    for (const auto& n : s.nodes) {
        if (n.status == NodeStatus::error || n.status == NodeStatus::stale || n.status == NodeStatus::missing) continue;
        std::map<PathKey, const GpuBandwidth*> slowest;
        for (const auto& b : n.bandwidth) {
            const long long limit = b.limit_gbps ? std::llround(*b.limit_gbps * 1000) : -1;
            auto& worst = slowest[{b.path, limit}];
            if (worst == nullptr || b.gbps < worst->gbps) worst = &b;
        }
        for (const auto& [path, b] : slowest) by_path[path].emplace_back(&n, b);
    }
    for (auto& [key, list] : by_path) {
        const std::string& path = key.first;
        if (list.size() < 2) continue;
        std::vector<double> figures;
        for (const auto& [node, b] : list) figures.push_back(b->gbps);
        std::sort(figures.begin(), figures.end());
        const std::size_t mid = figures.size() / 2;
        const double median = figures.size() % 2 != 0 ? figures[mid] : (figures[mid - 1] + figures[mid]) / 2;
        s.medians.push_back({path, list.front().second->limit_gbps, median, static_cast<int>(list.size())});
        std::vector<SlowNode> slow;
        for (const auto& [node, b] : list) {
            if (b->gbps < (1 - margin) * median) slow.push_back({node->host, path, *b, median});
        }
        std::sort(slow.begin(), slow.end(),
                  [](const SlowNode& a, const SlowNode& b) { return a.slowest.gbps < b.slowest.gbps; });
        s.slow.insert(s.slow.end(), slow.begin(), slow.end());
    }
}

}  // namespace

std::shared_ptr<const Properties> shared(Properties p) {
    return interned(std::move(p));
}

SharedText::SharedText(std::string_view text) : text_(interned(std::string(text))) {}

std::string gpu_name_of(const CheckFailure& f) {
    const auto index = f.nvml_index && *f.nvml_index >= 0
                           ? std::optional<unsigned>(static_cast<unsigned>(*f.nvml_index))
                           : std::nullopt;
    return gpu_name(index, f.pci_bus_id, f.device.value_or(-1));
}

FleetSummary FleetFold::finish(FleetInputs& inputs) {
    FleetSummary s;
    s.reports = inputs.documents;
    summarise_hosts(inputs, s);
    say_left_out(inputs, s.problems);
    judge_expectations(s, expect_);
    spread_checks(s);
    s.differences = differences(s.nodes);
    find_slow(s, expect_.slow_margin);
    return s;
}

FleetSummary summarise(FleetInputs& inputs, const Expectations& expect) {
    FleetFold fold(expect);
    for (auto& r : inputs.reports) fold.add(std::move(r));
    inputs.reports.clear();
    return fold.finish(inputs);
}

bool any_failing(const FleetSummary& summary) {
    return std::any_of(summary.nodes.begin(), summary.nodes.end(),
                       [](const NodeSummary& n) { return node_fails(n.status); });
}

}  // namespace cumemctl::fleet
