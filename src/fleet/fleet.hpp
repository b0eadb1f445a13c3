// Fleet summaries: many nodes' JSON reports (doctor, devices) read together, to say which nodes
// fail which check and which differ from the majority in driver, GPUs or capabilities.
#pragma once

#include <chrono>
#include <istream>
#include <optional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "doctor/check.hpp"
#include "fleet/node_status.hpp"

namespace cumemctl::fleet {

// An input that could not be used, or a document in it that is not a cumemctl report.
struct InputProblem {
    std::string source;  // the file name, or "-" for standard input
    std::string message;
};

// One report and where it came from.
struct SourcedReport {
    std::string source;
    nlohmann::json report;
};

// One GPU's memory health, as the node's doctor report says it (its memory-health check).
struct GpuHealth {
    int device = -1;
    std::string uuid;
    doctor::CheckStatus status = doctor::CheckStatus::skip;
    std::string reason;
};

// One check that failed (or ran out of time) on a node, with its GPU as operators name it.
struct CheckFailure {
    std::string check;
    doctor::CheckStatus status = doctor::CheckStatus::fail;  // fail, timeout
    std::optional<int> device;                               // the CUDA ordinal; none for a node check
    std::string uuid, pci_bus_id;                            // "" where the report does not say
    std::optional<int> nvml_index;                           // nvidia-smi's index, where the report says
    std::string reason, remedy;
};

// The GPU of a device's failure as nvidia-smi -i finds it: "nvidia3" (report/gpu_name.hpp).
std::string gpu_name_of(const CheckFailure& failure);

// One node, merged from its reports.
struct NodeSummary {
    std::string host;
    std::vector<std::string> sources;   // inputs that had reports of this node
    std::vector<std::string> commands;  // the commands of its reports ("doctor", "devices")
    std::string timestamp;              // of the doctor report used (the latest), else the latest report
    // pass, warn, busy, timeout, fail (doctor); error (a report not ok); unknown (no doctor); missing (expected,
    // no report); stale (its report is older than the age allowed)
    NodeStatus status = NodeStatus::unknown;
    std::vector<std::string> failed;  // "imex-channels", "context@gpu2" (the GPU as gpu_name names it)
    std::vector<std::string> warned;
    std::string error;                              // the first error of a report that was not ok
    std::map<std::string, std::string> remedies;    // check -> the remedy of its first failure or warning
    std::vector<GpuHealth> gpu_health;              // doctor's memory-health check, per GPU
    std::vector<CheckFailure> failures;             // each failed or timed-out check
    std::map<std::string, std::string> properties;  // "driver" -> "13.0", "capability_fabric" -> "yes" (keys:
                                                    // report/fleet_properties.hpp)
};

// The nodes that did not pass one check.
struct CheckSpread {
    std::string check;
    std::vector<std::string> failing;
    std::vector<std::string> warning;
    std::string remedy;  // the first node's remedy (nodes failing one check mostly share it)
};

// A property in which some nodes differ from the majority of the nodes that report it.
struct Difference {
    std::string property;  // its key (report/fleet_properties.hpp)
    std::string majority;  // the most common value ("" when tied)
    int majority_nodes = 0;
    int nodes = 0;                                               // nodes that report the property
    std::vector<std::pair<std::string, std::string>> differing;  // host, value
};

// What the fleet should be, beyond what its reports say.
struct Expectations {
    std::vector<std::string> hosts;         // nodes that must have reported (fleet --expect); empty: any
    std::optional<double> max_age_seconds;  // a node whose report is older than this is stale
    std::string max_age_name;               // the limit as a stale node's reason names it ("--max-age 7d");
                                            // "" names the age in words ("the 7 days allowed")
    std::chrono::system_clock::time_point now = std::chrono::system_clock::now();
};

// The whole summary.
struct FleetSummary {
    std::vector<NodeSummary> nodes;   // sorted by host
    std::vector<CheckSpread> checks;  // in order of first appearance
    std::vector<Difference> differences;
    int reports = 0;
};

// Reads every JSON document of one input (one report, or several one after another, as
// `srun ... --json > all.json` writes them). A document that does not parse ends the input; one
// that is not a cumemctl report is skipped; both are added to `problems`.
std::vector<SourcedReport> read_reports(std::istream& in, const std::string& source,
                                        std::vector<InputProblem>& problems);

// Builds the fleet summary from the reports (fabric-matrix reports aside: they make no node).
// Nodes of `expect.hosts` without a report are missing; a node whose report is older than
// `expect.max_age_seconds` is stale (its checks still shown).
FleetSummary summarise(const std::vector<SourcedReport>& reports, const Expectations& expect = {});

// Whether any node failed a check, has a report that was not ok, is missing or is stale.
bool any_failing(const FleetSummary& summary);

}  // namespace cumemctl::fleet
