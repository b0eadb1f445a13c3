// Fleet summaries: many nodes' JSON reports (doctor, devices) read together, to say which nodes
// fail which check and which differ from the majority in driver, GPUs or capabilities.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <unordered_set>
#include <vector>

#include "doctor/check.hpp"
#include "fleet/node_status.hpp"
#include "fleet/report_reader.hpp"

namespace cumemctl::fleet {

// A text that many nodes repeat (a GPU's UUID in each of its bandwidth figures, the reason every GPU
// of one kind gives, a path's name), held once while anyone holds it (interned.hpp): a node keeps a
// pointer, not its own copy. Read it as the std::string it stands for.
class SharedText {
public:
    SharedText() : SharedText(std::string_view()) {}
    SharedText(std::string_view text);  // NOLINT(google-explicit-constructor): it stands for the text
    SharedText(const std::string& text) : SharedText(std::string_view(text)) {}  // NOLINT
    SharedText(const char* text) : SharedText(std::string_view(text)) {}         // NOLINT

    const std::string& str() const { return *text_; }
    operator const std::string&() const { return *text_; }  // NOLINT
    bool empty() const { return text_->empty(); }
    friend bool operator==(const SharedText& a, const SharedText& b) { return a.text_ == b.text_; }

private:
    std::shared_ptr<const std::string> text_;  // the one copy of texts alike
};

// One GPU's memory health, as the node's doctor report says it (its memory-health check).
struct GpuHealth {
    int device = -1;
    SharedText uuid;
    doctor::CheckStatus status = doctor::CheckStatus::skip;
    SharedText reason;
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

// One GPU's measured bandwidth on a path, from the node's doctor report (host-bandwidth, memory-bandwidth).
struct GpuBandwidth {
    std::optional<int> device;
    SharedText uuid;
    SharedText path;  // "h2d", "d2h", "d2d"
    double gbps = 0;
    std::optional<double> limit_gbps;  // the path's limit: only nodes of one limit are compared
};

// A node's properties: "driver" -> "13.0", "capability_fabric" -> "yes" (keys: report/fleet_properties.hpp).
using Properties = std::map<std::string, std::string>;

// The one copy of `p` (interned.hpp), so that nodes alike (most of a fleet) hold a pointer each, not a
// copy of a few dozen names and values.
std::shared_ptr<const Properties> shared(Properties p);

// One node, merged from its reports.
struct NodeSummary {
    std::string host;
    std::vector<std::string> sources;   // inputs that had reports of this node
    std::vector<std::string> commands;  // the commands of its reports ("doctor", "devices")
    std::string timestamp;              // of the doctor report that speaks for it (summarise), else the latest
    // pass, warn, busy, timeout, fail (doctor); error (a report not ok); unknown (no doctor); missing (expected,
    // no report); stale (its report is older than the age allowed)
    NodeStatus status = NodeStatus::unknown;
    std::vector<std::string> failed;  // "imex-channels", "context@gpu2" (the GPU as gpu_name names it)
    std::vector<std::string> warned;
    std::string error;                            // the first error of a report that was not ok
    std::map<std::string, std::string> remedies;  // check -> the remedy of its first failure or warning
    std::vector<GpuHealth> gpu_health;            // doctor's memory-health check, per GPU
    std::vector<GpuBandwidth> bandwidth;          // doctor's bandwidth figures, per GPU and path
    std::vector<CheckFailure> failures;           // each failed or timed-out check
    std::shared_ptr<const Properties> properties = shared(Properties{});  // shared with the nodes alike
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

// A node whose slowest GPU on a path sits far below the fleet's median for that path: the node a job
// spread over the fleet waits on.
struct SlowNode {
    std::string host;
    std::string path;  // "h2d", "d2h", "d2d"
    GpuBandwidth slowest;
    double median = 0;  // the fleet's median of each node's slowest GPU on the path
};

// The fleet's median of a path among the nodes whose path has one limit (GPUs of one kind on one kind
// of link): each node's slowest GPU counts once.
struct PathMedian {
    std::string path;
    std::optional<double> limit_gbps;
    double gbps = 0;
    int nodes = 0;
};

// The default of fleet --slow-margin: a node more than 15% below the fleet's median is slow.
inline constexpr double kDefaultSlowMargin = 0.15;

// What the fleet should be, beyond what its reports say.
struct Expectations {
    std::vector<std::string> hosts;         // nodes that must have reported (fleet --expect); empty: any
    std::optional<double> max_age_seconds;  // a node whose report is older than this is stale
    std::string max_age_name;               // the limit as a stale node's reason names it ("--max-age 7d");
                                            // "" names the age in words ("the 7 days allowed")
    std::chrono::system_clock::time_point now = std::chrono::system_clock::now();
    double slow_margin = kDefaultSlowMargin;  // a node below (1 - this) x the median of a path is slow
    // Only reports that uid 0 signed on the host they name count (a MUNGE credential whose origin is
    // one of the host's addresses); every other report is an input problem, as if it were not there.
    bool require_signed = false;
    std::function<std::vector<std::uint32_t>(const std::string&)> addresses = host_addresses;  // a host's IPv4
};

// The whole summary.
struct FleetSummary {
    std::vector<NodeSummary> nodes;   // sorted by host
    std::vector<CheckSpread> checks;  // in order of first appearance
    std::vector<Difference> differences;
    std::vector<PathMedian> medians;  // each path with figures from two nodes or more, in path order
    std::vector<SlowNode> slow;       // by path, then slowest first
    int reports = 0;
    std::vector<InputProblem> problems;  // reports that parsed but cannot be believed (dated in the future)
};

// The fleet summary built as reports are read: each report is folded into its host's node when it is
// read (FleetInputs::sink), and of a host only what its summary keeps stays (the doctor report that
// speaks for it, already summarised; what its properties come from; a few numbers a report for its
// input problems), so that memory grows with the nodes, not with the size of their reports. The
// summary and its problems are those of summarise() over the same reports, in the same order.
class FleetFold {
public:
    explicit FleetFold(const Expectations& expect);  // kept by reference: it outlives the fold
    FleetFold(const FleetFold&) = delete;
    FleetFold& operator=(const FleetFold&) = delete;
    ~FleetFold();

    void add(NodeReport report);
    // Whether a report of `host` (`document` of input `source`) counts: with the nodes expected named,
    // only theirs; with require_signed, only one that root signed on `host` (`proof`). Every other one
    // is an input problem of the summary. add() asks it of each report; fleet asks it of fabric-matrix
    // reports (FleetInputs::admit).
    bool admits(const std::string& host, const std::optional<MungeProof>& proof, std::size_t source, int document);
    // The summary of the reports added: the inputs' problems must all have been added first (every
    // input read), so that the problems of the summary count after them, as summarise() counts them.
    FleetSummary finish(FleetInputs& inputs);

private:
    struct Host;
    void summarise_hosts(FleetInputs& inputs, FleetSummary& s);

    const Expectations& expect_;
    std::unordered_set<std::string> expected_;  // expect_.hosts, to look up each report's host
    std::map<std::string, std::vector<std::uint32_t>, std::less<>> addresses_;  // resolved once a host
    // The first reports of each input that are left out (not expected, or not signed), and per input how
    // many there were.
    std::vector<std::pair<std::size_t, std::string>> refused_;
    std::vector<std::size_t> refused_count_;
    std::map<std::string, std::unique_ptr<Host>> hosts_;
};

// How far past `expect.now` a report's timestamp may be (clocks differ a little); a later one is
// forged or its node's clock is wrong: its node is an error, and the report an input problem.
inline constexpr std::chrono::minutes kClockSkew{10};

// Seconds from `when` to `now`, in doubles: a time at either end of the clock's range does not overflow.
inline double age_seconds(std::chrono::system_clock::time_point now, std::chrono::system_clock::time_point when) {
    using Seconds = std::chrono::duration<double>;
    return Seconds(now.time_since_epoch()).count() - Seconds(when.time_since_epoch()).count();
}

// Builds the fleet summary from the doctor and devices reports read (report_reader.hpp). Nodes of
// `expect.hosts` without a report are missing; a node whose report is older than
// `expect.max_age_seconds`, or whose report's time cannot be read, is stale (its checks still shown).
// Of several doctor reports of one host, the worst among those within the age allowed speaks for it
// (every report, without an age), the newest of them where they are alike: a second report, forged or
// old, can add a failure to a node but never hide one. A malformed report, or one dated past now and
// kClockSkew, makes its node an error.
// It takes the reports: `inputs.reports` is empty after it (FleetFold over them).
FleetSummary summarise(FleetInputs& inputs, const Expectations& expect = {});

// Whether any node failed a check, has a report that was not ok, is missing or is stale.
bool any_failing(const FleetSummary& summary);

}  // namespace cumemctl::fleet
