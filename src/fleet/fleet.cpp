#include "fleet/fleet.hpp"
#include "report/fleet_properties.hpp"
#include "report/json_fields.hpp"

#include <algorithm>
#include <iterator>
#include <set>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "doctor/check.hpp"
#include "report/gpu_name.hpp"
#include "report/report.hpp"
#include "util/duration.hpp"
#include "util/host.hpp"

namespace cumemctl::fleet {
namespace {

// A JSON value as a table cell: yes/no/unknown, lists joined with commas.
std::string text_of(const nlohmann::json& v) {
    if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
    if (v.is_null()) return "unknown";
    if (v.is_string()) return v.get<std::string>();
    if (v.is_array()) {
        std::vector<std::string> parts;
        for (const auto& e : v) parts.push_back(text_of(e));
        return parts.empty() ? "none" : fmt::format("{}", fmt::join(parts, ","));
    }
    return v.dump();
}

// A text field of a report object, or "" where it is missing or not text.
std::string text_field(const nlohmann::json& doc, const char* key) {
    const auto it = doc.find(key);
    return it != doc.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Whether a report of `command` describes a node (its status and properties): doctor and devices do;
// a fabric-matrix report describes a pair matrix instead (matrix/matrix builds it).
bool describes_node(const std::string& command) {
    return command == "doctor" || command == "devices";
}

// Why a document cannot be summarised, or "" when it can.
std::string unusable(const nlohmann::json& doc) {
    if (!doc.is_object() || text_field(doc, "schema") != kSchemaName) {
        return fmt::format("not a cumemctl report (it has no \"schema\": \"{}\")", kSchemaName);
    }
    if (!doc.contains("command") || !doc["command"].is_string()) {
        return "a cumemctl report without a \"command\" that names the command it came from";
    }
    const std::string command = text_field(doc, "command");
    if (!describes_node(command) && command != "fabric-matrix") {
        return fmt::format("a report of '{}': fleet reads doctor, devices and fabric-matrix reports", command);
    }
    return {};
}

// The results object of a report (empty where it has none).
nlohmann::json results_of(const nlohmann::json& report) {
    const auto it = report.find("results");
    return it != report.end() && it->is_object() ? *it : nlohmann::json::object();
}

// The doctor check results of a doctor report (empty for other reports).
nlohmann::json checks_of(const nlohmann::json& report) {
    return results_of(report).value("checks", nlohmann::json::array());
}

// The details of the first check named `id` of a doctor report, for every device it ran on.
std::vector<nlohmann::json> check_details(const nlohmann::json& report, const std::string& id) {
    std::vector<nlohmann::json> out;
    for (const auto& c : checks_of(report)) {
        if (c.value("check", "") == id && c.contains("details")) out.push_back(c["details"]);
    }
    return out;
}

// The per-device capability objects of a report: from devices, or from doctor's capabilities check.
std::vector<nlohmann::json> capabilities_of(const nlohmann::json& report) {
    std::vector<nlohmann::json> out;
    if (report.value("command", "") == "devices") {
        for (const auto& d : results_of(report).value("devices", nlohmann::json::array())) {
            if (d.contains("capabilities")) out.push_back(d["capabilities"]);
        }
    } else {
        for (const auto& d : check_details(report, cumemctl::doctor::kCheckCapabilities)) {
            if (d.contains(cumemctl::doctor::kDetailCapabilities))
                out.push_back(d[cumemctl::doctor::kDetailCapabilities]);
        }
    }
    return out;
}

// The device names of a report.
std::vector<std::string> device_names(const nlohmann::json& report) {
    std::vector<std::string> names;
    if (report.value("command", "") == "devices") {
        for (const auto& d : results_of(report).value("devices", nlohmann::json::array()))
            names.push_back(d.value("name", ""));
    } else {
        for (const auto& d : check_details(report, cumemctl::doctor::kCheckDevices)) {
            for (const auto& n : d.value(cumemctl::doctor::kDetailNames, nlohmann::json::array()))
                names.push_back(n.get<std::string>());
        }
    }
    return names;
}

// The properties the fleet compares, read from one node's chosen reports (its doctor or its devices
// report, at least one of them, and its latest).
void read_properties(NodeSummary& node, const nlohmann::json* doctor, const nlohmann::json* devices,
                     const nlohmann::json& latest) {
    if (doctor == nullptr && devices == nullptr) {
        throw std::logic_error("fleet: a node has neither a doctor nor a devices report");
    }
    const nlohmann::json& counted = doctor != nullptr ? *doctor : *devices;
    const auto& driver = latest.value("driver", nlohmann::json::object());
    node.properties[std::string(kFleetDriver.key)] =
        driver.value("loaded", false) ? driver.value("version_string", "?") : "not loaded";
    node.properties[std::string(kFleetTool.key)] = latest.value("tool", nlohmann::json::object()).value("version", "?");
    const auto count = results_of(counted).value("device_count", nlohmann::json());
    if (count.is_number_integer()) node.properties[std::string(kFleetGpus.key)] = std::to_string(count.get<int>());
    if (doctor != nullptr) {
        for (const auto& d : check_details(*doctor, cumemctl::doctor::kCheckDriver)) {
            if (d.contains(cumemctl::doctor::kDetailKernelModule) &&
                d[cumemctl::doctor::kDetailKernelModule].is_string()) {
                node.properties[std::string(kFleetKernelModule.key)] =
                    d[cumemctl::doctor::kDetailKernelModule].get<std::string>();
            }
        }
    }
    const nlohmann::json& described = devices != nullptr ? *devices : *doctor;
    std::set<std::string> names;
    for (auto& n : device_names(described)) names.insert(std::move(n));
    if (!names.empty()) node.properties[std::string(kFleetGpuModel.key)] = fmt::format("{}", fmt::join(names, ", "));
    std::map<std::string, std::set<std::string>> caps;
    for (const auto& c : capabilities_of(described)) {
        for (const auto& [key, value] : c.items()) {
            if (key != "host_numa_id") caps[key].insert(text_of(value));
        }
    }
    for (const auto& [key, values] : caps) {
        node.properties[fleet_capability_key(key)] =
            values.size() == 1 ? *values.begin() : fmt::format("mixed ({})", fmt::join(values, "/"));
    }
}

// Thrown where a report cannot be read as cumemctl writes it; summarise makes its node an error.
class MalformedReport : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A doctor check's status, parsed where the report is read: one of doctor's, else the report is malformed.
doctor::CheckStatus status_of_check(const nlohmann::json& c) {
    const std::string text = c.value("status", "");
    const auto status = doctor::parse_status(text);
    if (!status) throw MalformedReport(fmt::format("check '{}' has status '{}'", c.value("check", "?"), text));
    return *status;
}

// A failed check as the fleet lists it: the GPU named by the check's own uuid and pci_bus_id (doctor
// writes them beside the ordinal), else by the report's list of GPUs, else by the check's details.
CheckFailure failure_of(const nlohmann::json& c, const nlohmann::json& results) {
    CheckFailure f;
    f.check = c.value("check", "?");
    f.status = status_of_check(c);
    f.reason = json_text(c, "reason");
    f.remedy = json_text(c, "remedy");
    if (!c.contains("device") || !c["device"].is_number_integer()) return f;
    f.device = c["device"].get<int>();
    nlohmann::json id = c;
    for (const auto& g : results.value("gpus", nlohmann::json::array())) {
        if (g.is_object() && g.value("ordinal", -1) == *f.device && !c.contains("uuid")) id = g;
    }
    auto text = [](const nlohmann::json& j, const char* key) {
        const auto it = j.find(key);
        return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    f.uuid = text(id, "uuid");
    if (f.uuid.empty() && c.contains("details") && c["details"].is_object()) f.uuid = text(c["details"], "uuid");
    f.pci_bus_id = text(id, "pci_bus_id");
    if (const auto it = id.find("nvml_index"); it != id.end() && it->is_number_integer()) f.nvml_index = it->get<int>();
    return f;
}

// Fills status and failed/warned checks from the node's doctor report, or from its reports' ok flags.
void read_status(NodeSummary& node, const nlohmann::json* doctor, const std::vector<const nlohmann::json*>& all) {
    if (doctor != nullptr) {
        node.status = parse_node_status(results_of(*doctor).value("status", ""));
        for (const auto& c : checks_of(*doctor)) {
            const doctor::CheckStatus status = status_of_check(c);
            std::string name = c.value("check", "?");
            // A device's check names its GPU as the node's drain reason does: "vmm@gpu3", nvidia-smi's index.
            if (const CheckFailure id = failure_of(c, results_of(*doctor)); id.device) name += "@" + gpu_name_of(id);
            // A check out of time is a finding (a hung GPU); a busy one is a job, as a warning is no failure.
            if (doctor::status_fails(status)) {
                node.failed.push_back(name);
                node.failures.push_back(failure_of(c, results_of(*doctor)));
            }
            if (status == doctor::CheckStatus::warn || status == doctor::CheckStatus::busy) node.warned.push_back(name);
            const auto remedy = c.value("remedy", nlohmann::json());
            if ((doctor::status_fails(status) || status == doctor::CheckStatus::warn) && remedy.is_string() &&
                !remedy.get<std::string>().empty())
                node.remedies.emplace(c.value("check", "?"), remedy.get<std::string>());
            if (c.value("check", "") == cumemctl::doctor::kCheckMemoryHealth) {
                const auto details = c.value("details", nlohmann::json::object());
                const auto device = c.value("device", nlohmann::json());
                node.gpu_health.push_back({device.is_number_integer() ? device.get<int>() : -1,
                                           details.is_object() ? details.value(cumemctl::doctor::kDetailUuid, "") : "",
                                           status, json_text(c, "reason")});
            }
        }
        return;
    }
    node.status = NodeStatus::unknown;
    for (const nlohmann::json* r : all) {
        if (r->value("ok", true)) continue;
        node.status = NodeStatus::error;
        const auto& errors = r->value("errors", nlohmann::json::array());
        if (!errors.empty()) node.error = errors[0].value("message", "");
        return;
    }
}

NodeSummary summarise_node(const std::string& host, const std::vector<const SourcedReport*>& reports) {
    NodeSummary node;
    node.host = host;
    const nlohmann::json* doctor = nullptr;
    const nlohmann::json* devices = nullptr;
    const nlohmann::json* latest = nullptr;
    std::vector<const nlohmann::json*> all;
    auto newer = [](const nlohmann::json* a, const nlohmann::json& b) {
        return a == nullptr || b.value("timestamp", "") >= a->value("timestamp", "");
    };
    for (const SourcedReport* r : reports) {
        const std::string command = r->report.value("command", "");
        if (std::find(node.sources.begin(), node.sources.end(), r->source) == node.sources.end())
            node.sources.push_back(r->source);
        if (std::find(node.commands.begin(), node.commands.end(), command) == node.commands.end())
            node.commands.push_back(command);
        if (command == "doctor" && newer(doctor, r->report)) doctor = &r->report;
        if (command == "devices" && newer(devices, r->report)) devices = &r->report;
        if (newer(latest, r->report)) latest = &r->report;
        all.push_back(&r->report);
    }
    // summarise gives a node only its doctor and devices reports (describes_node), at least one.
    if (latest == nullptr) throw std::logic_error("fleet: a node without reports");
    node.timestamp = (doctor != nullptr ? doctor : latest)->value("timestamp", "");
    read_status(node, doctor, all);
    read_properties(node, doctor, devices, *latest);
    return node;
}

// A node whose reports could not be read: error, saying why.
NodeSummary broken_node(const std::string& host, const std::vector<const SourcedReport*>& list, const char* why) {
    NodeSummary broken;
    broken.host = host;
    broken.status = NodeStatus::error;
    broken.error = std::string("a malformed report: ") + why;
    for (const auto* r : list) broken.sources.push_back(r->source);
    return broken;
}

std::vector<Difference> differences(const std::vector<NodeSummary>& nodes) {
    std::map<std::string, std::map<std::string, std::vector<std::string>>> by_property;  // property -> value -> hosts
    for (const auto& n : nodes) {
        for (const auto& [property, value] : n.properties) by_property[property][value].push_back(n.host);
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

// Marks the nodes whose report is older than the age allowed stale, and adds the expected nodes that
// sent nothing as missing; the nodes stay sorted by host.
void judge_expectations(FleetSummary& s, const Expectations& expect) {
    if (expect.max_age_seconds) {
        for (auto& n : s.nodes) {
            if (n.status == NodeStatus::error) continue;
            const auto when = parse_utc_timestamp(n.timestamp);
            const double age = when ? std::chrono::duration<double>(expect.now - *when).count() : 0;
            if (!when || age <= *expect.max_age_seconds) continue;
            n.status = NodeStatus::stale;
            n.error = fmt::format("its report is from {}, {} ago, more than {}", n.timestamp, format_age(age),
                                  expect.max_age_name.empty()
                                      ? fmt::format("the {} allowed", format_age(*expect.max_age_seconds))
                                      : expect.max_age_name);
        }
    }
    for (const auto& host : expect.hosts) {
        const bool seen =
            std::any_of(s.nodes.begin(), s.nodes.end(), [&](const NodeSummary& n) { return n.host == host; });
        if (seen) continue;
        NodeSummary missing;
        missing.host = host;
        missing.status = NodeStatus::missing;
        missing.error = "no report from this node";
        s.nodes.push_back(std::move(missing));
    }
    std::sort(s.nodes.begin(), s.nodes.end(),
              [](const NodeSummary& a, const NodeSummary& b) { return a.host < b.host; });
}

}  // namespace

std::string gpu_name_of(const CheckFailure& f) {
    const auto index = f.nvml_index && *f.nvml_index >= 0
                           ? std::optional<unsigned>(static_cast<unsigned>(*f.nvml_index))
                           : std::nullopt;
    return gpu_name(index, f.pci_bus_id, f.device.value_or(-1));
}

std::vector<SourcedReport> read_reports(std::istream& input, const std::string& source,
                                        std::vector<InputProblem>& problems) {
    // Read whole, so that a document that does not parse is placed by line and column in the input as
    // a person opens it (a pipe cannot be sought back), not by the JSON library's words.
    const std::string text{std::istreambuf_iterator<char>(input), std::istreambuf_iterator<char>()};
    std::istringstream in(text);
    std::vector<SourcedReport> out;
    int index = 0;
    while (true) {
        in >> std::ws;
        if (in.peek() == std::char_traits<char>::eof()) break;
        ++index;
        const auto offset = static_cast<std::size_t>(in.tellg());
        nlohmann::json doc;
        try {
            in >> doc;
        } catch (const nlohmann::json::parse_error& e) {
            // e.byte counts the characters the parser read of this document, the one it stopped at (or
            // the end of the input) included: its line and column as an editor counts them.
            const std::size_t read = offset + static_cast<std::size_t>(e.byte);
            const auto stop = text.begin() + static_cast<std::ptrdiff_t>(std::min(read, text.size()));
            const auto line = 1 + std::count(text.begin(), stop, '\n');
            const auto newline = std::find(std::make_reverse_iterator(stop), text.rend(), '\n');
            const std::size_t column =
                newline == text.rend() ? read : read - static_cast<std::size_t>(text.rend() - newline);
            problems.push_back({source, fmt::format("not JSON at line {}, column {}", line, column)});
            break;
        } catch (const nlohmann::json::exception&) {
            problems.push_back({source, fmt::format("not JSON from byte {} on", offset)});
            break;
        }
        if (const std::string why = unusable(doc); !why.empty()) {
            problems.push_back({source, fmt::format("document {}: {}", index, why)});
            continue;
        }
        out.push_back({source, std::move(doc)});
    }
    if (index == 0) problems.push_back({source, "it is empty: no report in it"});
    return out;
}

FleetSummary summarise(const std::vector<SourcedReport>& reports, const Expectations& expect) {
    FleetSummary s;
    s.reports = static_cast<int>(reports.size());
    std::map<std::string, std::vector<const SourcedReport*>> by_host;
    for (const auto& r : reports) {
        // Only doctor and devices reports make nodes; any other report (fabric-matrix: a pair matrix,
        // which matrix/matrix builds) is left out here, so that every node has one of them.
        if (!describes_node(text_field(r.report, "command"))) continue;
        const std::string host = text_field(r.report, "host");
        by_host[host.empty() ? r.source : host].push_back(&r);
    }
    for (const auto& [host, list] : by_host) {
        try {
            s.nodes.push_back(summarise_node(host, list));
        } catch (const nlohmann::json::exception& e) {
            s.nodes.push_back(broken_node(host, list, e.what()));
        } catch (const MalformedReport& e) {
            s.nodes.push_back(broken_node(host, list, e.what()));
        }
    }
    judge_expectations(s, expect);
    for (const auto& n : s.nodes) {
        auto spread = [&](const std::vector<std::string>& names, bool failing) {
            for (const auto& name : names) {
                const std::string check = name.substr(0, name.find('@'));
                auto it = std::find_if(s.checks.begin(), s.checks.end(),
                                       [&](const CheckSpread& c) { return c.check == check; });
                if (it == s.checks.end()) it = s.checks.insert(s.checks.end(), CheckSpread{check, {}, {}, {}});
                if (const auto r = n.remedies.find(check); it->remedy.empty() && r != n.remedies.end())
                    it->remedy = r->second;
                auto& hosts = failing ? it->failing : it->warning;
                if (std::find(hosts.begin(), hosts.end(), n.host) == hosts.end()) hosts.push_back(n.host);
            }
        };
        spread(n.failed, true);
        spread(n.warned, false);
    }
    s.differences = differences(s.nodes);
    return s;
}

bool any_failing(const FleetSummary& summary) {
    return std::any_of(summary.nodes.begin(), summary.nodes.end(),
                       [](const NodeSummary& n) { return node_fails(n.status); });
}

}  // namespace cumemctl::fleet
