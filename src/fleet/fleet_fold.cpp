// fleet's nodes built as their reports are read (FleetFold, fleet.hpp): each report is folded into its
// host at once, and of a host only what its summary prints is kept (the doctor report that speaks for
// it, already summarised; what its properties come from; a few numbers a report for its input
// problems), so that memory grows with the nodes, not with their reports.
#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <unordered_set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fleet/fleet.hpp"
#include "report/fleet_properties.hpp"

namespace cumemctl::fleet {
// The types a host keeps (FleetFold::Host's fields: not in an unnamed namespace).
namespace folded {

// A report's time: parsed where it can be, and its text.
struct Dated {
    std::optional<std::chrono::system_clock::time_point> when;
    std::string timestamp;
};

// Whether `a` is newer than `b`: by their parsed times where both have one, else by their text.
bool newer(const Dated& a, const Dated& b) {
    if (a.when && b.when) return *a.when > *b.when;
    return a.timestamp > b.timestamp;
}

// Whether a report is within the age allowed (every report is, without one); a time that cannot be
// read never is.
bool fresh(const NodeReport& r, const Expectations& expect) {
    if (!expect.max_age_seconds) return true;
    return r.when && age_seconds(expect.now, *r.when) <= *expect.max_age_seconds;
}

// What a report tells of its node's properties (report/fleet_properties.hpp), without the report.
struct Described {
    std::optional<long long> device_count;
    std::optional<std::string> kernel_module;
    std::string model;  // the distinct GPU names, joined
    std::shared_ptr<const Capabilities> capabilities;
};

// A report as its host's input problems name it, once the report itself is gone.
struct ReportStub {
    std::size_t source = 0;
    int document = 0;
    ReportKind kind = ReportKind::doctor;
    bool run_status = false;
    bool dated = false;  // its time can be read
};

}  // namespace folded
namespace {
using namespace folded;

bool in_future(const NodeReport& r, const Expectations& expect) {
    return r.when && age_seconds(expect.now, *r.when) < -std::chrono::duration<double>(kClockSkew).count();
}

Described described_by(const NodeReport& r) {
    const std::set<std::string> names(r.device_names.begin(), r.device_names.end());
    return {r.device_count, r.kernel_module, fmt::format("{}", fmt::join(names, ", ")), r.shared_capabilities};
}

// The properties the fleet compares, from one node's chosen reports (its doctor or its devices report,
// at least one of them) and the driver and tool of its latest.
std::shared_ptr<const Properties> properties_of(const Described* doctor, const Described* devices,
                                                const std::string& driver, const std::string& tool) {
    if (doctor == nullptr && devices == nullptr)
        throw std::logic_error("fleet: a node has neither a doctor nor a devices report");
    Properties properties;
    const Described& counted = doctor != nullptr ? *doctor : *devices;
    properties[std::string(kFleetDriver.key)] = driver;
    properties[std::string(kFleetTool.key)] = tool;
    if (counted.device_count) properties[std::string(kFleetGpus.key)] = std::to_string(*counted.device_count);
    if (doctor != nullptr && doctor->kernel_module)
        properties[std::string(kFleetKernelModule.key)] = *doctor->kernel_module;
    const Described& described = devices != nullptr ? *devices : *doctor;
    if (!described.model.empty()) properties[std::string(kFleetGpuModel.key)] = described.model;
    if (described.capabilities) {
        for (const auto& [key, values] : *described.capabilities) {
            properties[fleet_capability_key(key)] =
                values.size() == 1 ? *values.begin() : fmt::format("mixed ({})", fmt::join(values, "/"));
        }
    }
    return shared(std::move(properties));
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

// Fills status, failed and warned checks, remedies, memory health and bandwidth from a doctor report.
void read_doctor(NodeSummary& node, NodeReport& doctor) {
    node.status = doctor.status;
    std::map<long long, const ReportedGpu*> gpus;  // the last of an ordinal given twice, as before
    for (const auto& g : doctor.gpus) gpus[g.ordinal] = &g;
    for (auto& c : doctor.checks) {
        CheckFailure failure = failure_of(c, gpus);
        std::string name = c.check;
        // A device's check names its GPU as the node's drain reason does: "vmm@gpu3", nvidia-smi's index.
        if (failure.device) name += "@" + gpu_name_of(failure);
        // A check out of time is a finding (a hung GPU); a busy one is a job, as a warning is no failure.
        if (c.status == doctor::CheckStatus::warn || c.status == doctor::CheckStatus::busy) node.warned.push_back(name);
        if ((doctor::status_fails(c.status) || c.status == doctor::CheckStatus::warn) && !c.remedy.empty())
            node.remedies.emplace(c.check, c.remedy);
        if (c.check == cumemctl::doctor::kCheckMemoryHealth)
            node.gpu_health.push_back({c.device.value_or(-1), c.details_uuid, c.status, c.reason});
        if (doctor::status_fails(c.status)) {
            node.failed.push_back(std::move(name));
            node.failures.push_back(std::move(failure));
        }
    }
    node.bandwidth.reserve(doctor.bandwidth.size());
    for (auto& b : doctor.bandwidth) node.bandwidth.push_back({b.device, b.uuid, b.path, b.gbps, b.limit_gbps});
}

// Whether a report can make an expected node present: a doctor report that a whole run wrote (it gives
// the run's own status) with a time that can be read and is not past now and the skew clocks may have.
bool complete_doctor(const NodeReport& r, const Expectations& expect) {
    return r.kind == ReportKind::doctor && r.run_status && r.malformed.empty() && r.when && !in_future(r, expect);
}

// What a report is, for an input problem: "a devices report", "a doctor report without its run's status".
std::string report_words(const ReportStub& r) {
    if (r.kind == ReportKind::devices) return "a devices report";
    if (!r.run_status) return "a doctor report without its run's status";
    if (!r.dated) return "a doctor report without a time that can be read";
    return "a doctor report dated in the future";
}

// Why a report of `host` does not count under require_signed ("" where it does): no credential, another
// uid, or a credential from an address that is none of its host's.
std::string unsigned_why(const std::string& host, const std::optional<MungeProof>& proof,
                         std::map<std::string, std::vector<std::uint32_t>, std::less<>>& cache,
                         const Expectations& expect) {
    if (!proof) return "it came in no MUNGE credential";
    if (proof->uid != 0) return fmt::format("uid {} signed it, not root", proof->uid);
    auto it = cache.find(host);
    if (it == cache.end()) it = cache.emplace(host, expect.addresses(host)).first;
    if (std::find(it->second.begin(), it->second.end(), proof->origin) != it->second.end()) return {};
    char text[INET_ADDRSTRLEN] = "?";
    in_addr addr{};
    addr.s_addr = proof->origin;
    inet_ntop(AF_INET, &addr, text, sizeof text);
    return it->second.empty() ? fmt::format("its host name has no IPv4 address, and munged on {} signed it", text)
                              : fmt::format("munged on {} signed it, which is not one of its host's addresses", text);
}

}  // namespace

// One host as folded so far: what its node's summary and its input problems need of its reports.
struct FleetFold::Host {
    std::vector<ReportStub> stubs;     // every report of it, in the order read
    std::vector<std::size_t> sources;  // inputs that had reports of it, in order of first report
    bool doctor_seen = false, devices_seen = false, complete = false;
    std::string why;  // why its reports cannot be used (the first malformed or future one); "" when they can
    std::vector<std::pair<ReportStub, std::string>> future;  // the reports dated in the future, with their time
    // The doctor report that speaks for it, already summarised: the worst of those within the age
    // allowed, the newest of them where they are alike; where none is, the newest.
    struct Speaker {
        bool fresh = false;
        Dated dated;
        NodeSummary parts;  // status, checks, health and bandwidth (read_doctor)
        Described described;
    };
    std::optional<Speaker> doctor;
    std::optional<std::pair<Dated, Described>> devices;  // the newest devices report
    Dated latest;                                        // of any report, with its driver and tool
    std::string driver, tool;
    std::optional<std::string> not_ok;  // the first error of the first report that was not ok

    void add(NodeReport& r, const Expectations& expect);
    NodeSummary summarise(const std::string& host, FleetInputs& inputs, const Expectations& expect, FleetSummary& s);
};

void FleetFold::Host::add(NodeReport& r, const Expectations& expect) {
    const bool first = stubs.empty();
    stubs.push_back({r.source, r.document, r.kind, r.run_status, r.when.has_value()});
    if (sources.empty() || sources.back() != r.source) sources.push_back(r.source);  // inputs are read in order
    (r.kind == ReportKind::doctor ? doctor_seen : devices_seen) = true;
    complete = complete || complete_doctor(r, expect);
    if (!r.malformed.empty() && why.empty()) why = "a malformed report: " + r.malformed;
    if (in_future(r, expect)) {
        future.emplace_back(stubs.back(), r.timestamp);
        if (why.empty())
            why = fmt::format("a report dated {}, in the future: forged, or the node's clock is wrong", r.timestamp);
    }
    if (!r.ok && !not_ok) not_ok = r.first_error;
    Dated dated{r.when, r.timestamp};
    if (first || !newer(latest, dated)) {
        latest = dated;
        driver = r.driver_version;
        tool = r.tool_version;
    }
    if (r.kind == ReportKind::devices && (!devices || !newer(devices->first, dated)))
        devices.emplace(dated, described_by(r));
    if (r.kind != ReportKind::doctor) return;
    const bool is_fresh = fresh(r, expect);
    bool better = !doctor || (is_fresh && !doctor->fresh);
    if (doctor && is_fresh == doctor->fresh) {
        const int by = is_fresh ? node_severity(r.status) - node_severity(doctor->parts.status) : 0;
        better = by > 0 || (by == 0 && !newer(doctor->dated, dated));
    }
    if (!better) return;
    Speaker speaker{is_fresh, std::move(dated), {}, described_by(r)};
    read_doctor(speaker.parts, r);
    doctor = std::move(speaker);
}

// Its node: an error where its reports cannot be used; missing where it is expected and no complete
// doctor report names it (each of its reports an input problem, so that a devices report or a half
// report that another node wrote cannot make it present); else as its reports say.
NodeSummary FleetFold::Host::summarise(const std::string& host, FleetInputs& inputs, const Expectations& expect,
                                       FleetSummary& s) {
    for (const auto& [r, timestamp] : future) {
        add_problem(inputs, s.problems, r.source,
                    fmt::format("document {}: the report of {} is dated {}, later than now and the {} min that "
                                "clocks may differ",
                                r.document, host, timestamp, kClockSkew.count()));
    }
    NodeSummary node;
    node.host = host;
    for (const std::size_t source : sources) node.sources.push_back(inputs.sources[source]);
    if (doctor_seen) node.commands.emplace_back("doctor");
    if (devices_seen) node.commands.emplace_back("devices");
    if (!why.empty() || (!expect.hosts.empty() && !complete)) {
        node.commands.clear();
        node.status = why.empty() ? NodeStatus::missing : NodeStatus::error;
        node.error = why.empty() ? "no complete doctor report from this node" : why;
        if (!why.empty()) return node;
        for (const ReportStub& r : stubs) {
            add_problem(inputs, s.problems, r.source,
                        lists_problem(inputs, r.source)
                            ? fmt::format("document {}: {} of {}, an expected node, does not make it present: "
                                          "only a complete doctor report does",
                                          r.document, report_words(r), host)
                            : std::string());
        }
        return node;
    }
    const Dated& dated = doctor ? doctor->dated : latest;
    if (dated.when) node.timestamp = dated.timestamp;  // a time that cannot be read is not shown as one
    if (doctor) {
        NodeSummary& parts = doctor->parts;
        node.status = parts.status;
        node.failed = std::move(parts.failed);
        node.warned = std::move(parts.warned);
        node.remedies = std::move(parts.remedies);
        node.gpu_health = std::move(parts.gpu_health);
        node.bandwidth = std::move(parts.bandwidth);
        node.failures = std::move(parts.failures);
    } else if (not_ok) {
        node.status = NodeStatus::error;
        node.error = *not_ok;
    }
    node.properties =
        properties_of(doctor ? &doctor->described : nullptr, devices ? &devices->second : nullptr, driver, tool);
    return node;
}

FleetFold::FleetFold(const Expectations& expect)
    : expect_(expect), expected_(expect.hosts.begin(), expect.hosts.end()) {}
FleetFold::~FleetFold() = default;

bool FleetFold::admits(const std::string& host, const std::optional<MungeProof>& proof, std::size_t source,
                       int document) {
    // With the nodes expected named, no other name reaches the summary, nor so the drain list; nor is it
    // looked up (a report could name any number of hosts, each a DNS query).
    std::string why;
    if (!expected_.empty() && expected_.count(host) == 0) {
        why = "which is not among the nodes expected: it is left out";
    } else if (expect_.require_signed) {
        if (const std::string not_signed = unsigned_why(host, proof, addresses_, expect_); !not_signed.empty())
            why = "which counts as not sent: " + not_signed;
    }
    if (why.empty()) return true;
    // Only the first of an input can be listed: the others are counted (finish).
    if (refused_count_.size() <= source) refused_count_.resize(source + 1);
    if (refused_count_[source]++ < kProblemsListed)
        refused_.push_back({source, fmt::format("document {}: a report of {}, {}", document, host, why)});
    return false;
}

void FleetFold::add(NodeReport report) {
    if (!admits(report.host, report.proof, report.source, report.document)) return;
    auto it = hosts_.find(report.host);
    if (it == hosts_.end()) it = hosts_.emplace(report.host, std::make_unique<Host>()).first;
    it->second->add(report, expect_);
}

void FleetFold::summarise_hosts(FleetInputs& inputs, FleetSummary& s) {
    for (auto& [source, message] : refused_) {
        add_problem(inputs, s.problems, source, lists_problem(inputs, source) ? std::move(message) : std::string());
    }
    for (std::size_t source = 0; source < refused_count_.size(); ++source) {
        for (std::size_t i = kProblemsListed; i < refused_count_[source]; ++i)
            add_problem(inputs, s.problems, source, {});
    }
    refused_.clear();
    refused_count_.clear();
    for (auto& [host, folded] : hosts_) {
        s.nodes.push_back(folded->summarise(host, inputs, expect_, s));  // only expected ones, where named (add)
        folded.reset();                                                  // its memory for the next node's summary
    }
    hosts_.clear();
}

}  // namespace cumemctl::fleet
