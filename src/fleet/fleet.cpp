#include "fleet/fleet.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include "report/fleet_properties.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string_view>
#include <unordered_set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "doctor/check.hpp"
#include "report/gpu_name.hpp"
#include "util/duration.hpp"
#include "util/host.hpp"

namespace cumemctl::fleet {
namespace {

// Whether `a` is newer than `b`: by their parsed times where both have one, else by their text.
bool newer(const NodeReport& a, const NodeReport& b) {
    if (a.when && b.when) return *a.when > *b.when;
    return a.timestamp > b.timestamp;
}

// Seconds from `when` to `now`, in doubles: a time at either end of the clock's range does not overflow.
double age_seconds(std::chrono::system_clock::time_point now, std::chrono::system_clock::time_point when) {
    using Seconds = std::chrono::duration<double>;
    return Seconds(now.time_since_epoch()).count() - Seconds(when.time_since_epoch()).count();
}

// Whether a report is within the age allowed (every report is, without one); a time that cannot be
// read never is.
bool fresh(const NodeReport& r, const Expectations& expect) {
    if (!expect.max_age_seconds) return true;
    return r.when && age_seconds(expect.now, *r.when) <= *expect.max_age_seconds;
}

// The doctor report that speaks for a host: the worst of those within the age allowed, the newest of
// them where they are alike; where none is, the newest (which judge_expectations finds stale).
const NodeReport* speaking_doctor(const std::vector<const NodeReport*>& doctors, const Expectations& expect) {
    const NodeReport* chosen = nullptr;
    bool chosen_fresh = false;
    for (const NodeReport* r : doctors) {
        const bool is_fresh = fresh(*r, expect);
        bool better = chosen == nullptr || (is_fresh && !chosen_fresh);
        if (chosen != nullptr && is_fresh == chosen_fresh) {
            const int by = is_fresh ? node_severity(r->status) - node_severity(chosen->status) : 0;
            better = by > 0 || (by == 0 && !newer(*chosen, *r));
        }
        if (better) {
            chosen = r;
            chosen_fresh = is_fresh;
        }
    }
    return chosen;
}

// The properties the fleet compares, read from one node's chosen reports (its doctor or its devices
// report, at least one of them, and its latest).
void read_properties(NodeSummary& node, const NodeReport* doctor, const NodeReport* devices, const NodeReport& latest) {
    if (doctor == nullptr && devices == nullptr)
        throw std::logic_error("fleet: a node has neither a doctor nor a devices report");
    Properties properties;
    const NodeReport& counted = doctor != nullptr ? *doctor : *devices;
    properties[std::string(kFleetDriver.key)] = latest.driver_version;
    properties[std::string(kFleetTool.key)] = latest.tool_version;
    if (counted.device_count) properties[std::string(kFleetGpus.key)] = std::to_string(*counted.device_count);
    if (doctor != nullptr && doctor->kernel_module)
        properties[std::string(kFleetKernelModule.key)] = *doctor->kernel_module;
    const NodeReport& described = devices != nullptr ? *devices : *doctor;
    const std::set<std::string> names(described.device_names.begin(), described.device_names.end());
    if (!names.empty()) properties[std::string(kFleetGpuModel.key)] = fmt::format("{}", fmt::join(names, ", "));
    if (described.shared_capabilities) {
        for (const auto& [key, values] : *described.shared_capabilities) {
            properties[fleet_capability_key(key)] =
                values.size() == 1 ? *values.begin() : fmt::format("mixed ({})", fmt::join(values, "/"));
        }
    }
    node.properties = shared(std::move(properties));
}

// A failed check as the fleet lists it: the GPU named by the check's own uuid and pci_bus_id (doctor
// writes them beside the ordinal), else by the report's list of GPUs, else by the check's details.
CheckFailure failure_of(const ReportedCheck& c, const std::map<long long, const ReportedGpu*>& gpus) {
    CheckFailure f;
    f.check = c.check;
    f.status = c.status;
    f.reason = c.reason;
    f.remedy = c.remedy;
    if (!c.device) return f;
    f.device = *c.device;
    f.uuid = c.uuid;
    f.pci_bus_id = c.pci_bus_id;
    f.nvml_index = c.nvml_index;
    if (const auto g = gpus.find(*c.device); !c.names_gpu && g != gpus.end()) {
        f.uuid = g->second->uuid;
        f.pci_bus_id = g->second->pci_bus_id;
        f.nvml_index = g->second->nvml_index;
    }
    if (f.uuid.empty()) f.uuid = c.details_uuid;
    return f;
}

// Fills status and failed/warned checks from the node's doctor report, or from its reports' ok flags.
void read_status(NodeSummary& node, const NodeReport* doctor, const std::vector<const NodeReport*>& all) {
    if (doctor != nullptr) {
        node.status = doctor->status;
        std::map<long long, const ReportedGpu*> gpus;  // the last of an ordinal given twice, as before
        for (const auto& g : doctor->gpus) gpus[g.ordinal] = &g;
        for (const auto& c : doctor->checks) {
            const CheckFailure failure = failure_of(c, gpus);
            std::string name = c.check;
            // A device's check names its GPU as the node's drain reason does: "vmm@gpu3", nvidia-smi's index.
            if (failure.device) name += "@" + gpu_name_of(failure);
            // A check out of time is a finding (a hung GPU); a busy one is a job, as a warning is no failure.
            if (doctor::status_fails(c.status)) {
                node.failed.push_back(name);
                node.failures.push_back(failure);
            }
            if (c.status == doctor::CheckStatus::warn || c.status == doctor::CheckStatus::busy)
                node.warned.push_back(name);
            if ((doctor::status_fails(c.status) || c.status == doctor::CheckStatus::warn) && !c.remedy.empty())
                node.remedies.emplace(c.check, c.remedy);
            if (c.check == cumemctl::doctor::kCheckMemoryHealth)
                node.gpu_health.push_back({c.device.value_or(-1), c.details_uuid, c.status, c.reason});
        }
        for (const auto& b : doctor->bandwidth)
            node.bandwidth.push_back({b.device, b.uuid, b.path, b.gbps, b.limit_gbps});
        return;
    }
    node.status = NodeStatus::unknown;
    for (const NodeReport* r : all) {
        if (r->ok) continue;
        node.status = NodeStatus::error;
        node.error = r->first_error;
        return;
    }
}

// A node whose reports cannot be used: error, saying why.
NodeSummary broken_node(const std::string& host, const std::vector<std::string>& sources, std::string why) {
    NodeSummary broken;
    broken.host = host;
    broken.status = NodeStatus::error;
    broken.error = std::move(why);
    broken.sources = sources;
    return broken;
}

// Whether a report can make an expected node present: a doctor report that a whole run wrote (it gives
// the run's own status) with a time that can be read and is not past now and the skew clocks may have.
bool complete_doctor(const NodeReport& r, const Expectations& expect) {
    return r.kind == ReportKind::doctor && r.run_status && r.malformed.empty() && r.when &&
           age_seconds(expect.now, *r.when) >= -std::chrono::duration<double>(kClockSkew).count();
}

// What a report is, for an input problem: "a devices report", "a doctor report without its run's status".
std::string report_words(const NodeReport& r) {
    if (r.kind == ReportKind::devices) return "a devices report";
    if (!r.run_status) return "a doctor report without its run's status";
    if (!r.when) return "a doctor report without a time that can be read";
    return "a doctor report dated in the future";
}

// An expected node that no complete doctor report names: missing, each of its documents an input
// problem, so that a devices report or a half report that another node wrote cannot make it present.
NodeSummary still_missing(const std::string& host, const std::vector<const NodeReport*>& reports, FleetInputs& inputs,
                          std::vector<std::string> sources, FleetSummary& s) {
    for (const NodeReport* r : reports) {
        if (!lists_problem(inputs, r->source)) {
            add_problem(inputs, s.problems, r->source, {});  // counted only
            continue;
        }
        add_problem(inputs, s.problems, r->source,
                    fmt::format("document {}: {} of {}, an expected node, does not make it present: only a "
                                "complete doctor report does",
                                r->document, report_words(*r), host));
    }
    NodeSummary m;
    m.host = host;
    m.status = NodeStatus::missing;
    m.error = "no complete doctor report from this node";
    m.sources = std::move(sources);
    return m;
}

NodeSummary summarise_node(const std::string& host, const std::vector<const NodeReport*>& reports, FleetInputs& inputs,
                           const Expectations& expect, FleetSummary& s) {
    NodeSummary node;
    node.host = host;
    std::vector<const NodeReport*> doctors;
    const NodeReport* devices = nullptr;
    const NodeReport* latest = nullptr;
    std::string why;
    std::set<std::size_t> sources;
    bool doctor_seen = false, devices_seen = false, complete = false;
    for (const NodeReport* r : reports) {
        const std::string& source = inputs.sources[r->source];
        if (sources.insert(r->source).second) node.sources.push_back(source);
        (r->kind == ReportKind::doctor ? doctor_seen : devices_seen) = true;
        complete = complete || complete_doctor(*r, expect);
        if (r->kind == ReportKind::doctor) doctors.push_back(r);
        if (r->kind == ReportKind::devices && (devices == nullptr || !newer(*devices, *r))) devices = r;
        if (latest == nullptr || !newer(*latest, *r)) latest = r;
        if (!r->malformed.empty() && why.empty()) why = "a malformed report: " + r->malformed;
        if (r->when && age_seconds(expect.now, *r->when) < -std::chrono::duration<double>(kClockSkew).count()) {
            add_problem(inputs, s.problems, r->source,
                        fmt::format("document {}: the report of {} is dated {}, later than now and the {} min that "
                                    "clocks may differ",
                                    r->document, host, r->timestamp, kClockSkew.count()));
            if (why.empty())
                why =
                    fmt::format("a report dated {}, in the future: forged, or the node's clock is wrong", r->timestamp);
        }
    }
    if (doctor_seen) node.commands.emplace_back("doctor");
    if (devices_seen) node.commands.emplace_back("devices");
    if (latest == nullptr) throw std::logic_error("fleet: a node without reports");  // summarise gives one at least
    if (!why.empty()) return broken_node(host, node.sources, why);
    if (!expect.hosts.empty() && !complete) return still_missing(host, reports, inputs, node.sources, s);
    const NodeReport* doctor = speaking_doctor(doctors, expect);
    const NodeReport* dated = doctor != nullptr ? doctor : latest;
    if (dated->when) node.timestamp = dated->timestamp;  // a time that cannot be read is not shown as one
    read_status(node, doctor, reports);
    read_properties(node, doctor, devices, *latest);
    return node;
}

// Why a report does not count under require_signed ("" where it does): no credential, another uid, or
// a credential from an address that is none of its host's.
std::string unsigned_why(const NodeReport& r, std::map<std::string, std::vector<std::uint32_t>, std::less<>>& cache,
                         const Expectations& expect) {
    if (!r.proof) return "it came in no MUNGE credential";
    if (r.proof->uid != 0) return fmt::format("uid {} signed it, not root", r.proof->uid);
    auto it = cache.find(r.host);
    if (it == cache.end()) it = cache.emplace(r.host, expect.addresses(r.host)).first;
    if (std::find(it->second.begin(), it->second.end(), r.proof->origin) != it->second.end()) return {};
    char text[INET_ADDRSTRLEN] = "?";
    in_addr addr{};
    addr.s_addr = r.proof->origin;
    inet_ntop(AF_INET, &addr, text, sizeof text);
    return it->second.empty() ? fmt::format("its host name has no IPv4 address, and munged on {} signed it", text)
                              : fmt::format("munged on {} signed it, which is not one of its host's addresses", text);
}

std::vector<Difference> differences(const std::vector<NodeSummary>& nodes) {
    std::map<std::string, std::map<std::string, std::vector<std::string>>> by_property;  // property -> value -> hosts
    for (const auto& n : nodes) {
        for (const auto& [property, value] : *n.properties) by_property[property][value].push_back(n.host);
    }
    std::vector<Difference> out;
    for (const auto& [property, values] : by_property) {
        if (values.size() < 2) continue;
        Difference d;
        d.property = property;
        int second = 0;
        for (const auto& [value, hosts] : values) {
            const int n = static_cast<int>(hosts.size());
            d.nodes += n;
            if (n > d.majority_nodes) {
                second = d.majority_nodes;
                d.majority_nodes = n;
                d.majority = value;
            } else {
                second = std::max(second, n);
            }
        }
        if (second == d.majority_nodes) d.majority.clear();  // a tie: no majority
        for (const auto& [value, hosts] : values) {
            if (!d.majority.empty() && value == d.majority) continue;
            for (const auto& h : hosts) d.differing.emplace_back(h, value);
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
    struct ByContent {
        bool operator()(const std::shared_ptr<const Properties>& a, const std::shared_ptr<const Properties>& b) const {
            return *a < *b;
        }
    };
    static std::mutex lock;
    static std::set<std::shared_ptr<const Properties>, ByContent> pool;
    auto made = std::make_shared<const Properties>(std::move(p));
    const std::lock_guard<std::mutex> held(lock);
    return *pool.insert(std::move(made)).first;
}

std::string gpu_name_of(const CheckFailure& f) {
    const auto index = f.nvml_index && *f.nvml_index >= 0
                           ? std::optional<unsigned>(static_cast<unsigned>(*f.nvml_index))
                           : std::nullopt;
    return gpu_name(index, f.pci_bus_id, f.device.value_or(-1));
}

FleetSummary summarise(FleetInputs& inputs, const Expectations& expect) {
    FleetSummary s;
    s.reports = inputs.documents;
    std::map<std::string, std::vector<NodeReport*>> by_host;
    std::map<std::string, std::vector<std::uint32_t>, std::less<>> addresses;  // resolved once a host
    for (auto& r : inputs.reports) {
        if (expect.require_signed) {
            const std::string why = unsigned_why(r, addresses, expect);
            if (!why.empty()) {
                add_problem(inputs, s.problems, r.source,
                            lists_problem(inputs, r.source)
                                ? fmt::format("document {}: a report of {} that counts as not sent: {}", r.document,
                                              r.host, why)
                                : std::string());
                r = NodeReport{};
                continue;
            }
        }
        by_host[r.host].push_back(&r);
    }
    const std::unordered_set<std::string_view> expected(expect.hosts.begin(), expect.hosts.end());
    for (auto& [host, list] : by_host) {
        // With the nodes expected named, no other name reaches the summary, nor so the drain list.
        if (!expected.empty() && expected.count(host) == 0) {
            for (const NodeReport* r : list) {
                add_problem(inputs, s.problems, r->source,
                            lists_problem(inputs, r->source)
                                ? fmt::format("document {}: a report of {}, which is not among the nodes expected: "
                                              "it is left out",
                                              r->document, host)
                                : std::string());
            }
        } else {
            s.nodes.push_back(summarise_node(host, {list.begin(), list.end()}, inputs, expect, s));
        }
        for (NodeReport* r : list) *r = NodeReport{};  // its memory for the next node's summary
    }
    inputs.reports.clear();
    say_left_out(inputs, s.problems);
    judge_expectations(s, expect);
    spread_checks(s);
    s.differences = differences(s.nodes);
    find_slow(s, expect.slow_margin);
    return s;
}

bool any_failing(const FleetSummary& summary) {
    return std::any_of(summary.nodes.begin(), summary.nodes.end(),
                       [](const NodeSummary& n) { return node_fails(n.status); });
}

}  // namespace cumemctl::fleet
