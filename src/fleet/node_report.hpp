// One report as fleet keeps it: what the summary needs of a node's doctor or devices report, typed and
// checked where it was read (report_reader.hpp), and nothing else, so that a fleet's memory grows with
// its nodes, not with the size of their reports. A fabric-matrix report keeps its results, typed, for the matrix.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "doctor/check.hpp"
#include "fleet/munge.hpp"
#include "fleet/node_status.hpp"
#include "matrix/matrix_results.hpp"

namespace cumemctl::fleet {

enum class ReportKind { doctor, devices, fabric_matrix };

// The most fleet keeps of one report, so that its memory and time grow with the nodes, not with what a
// node chose to write; past a cap it keeps the first ones, and the output says so (an input problem,
// or the text cut with its cap named). A check past the cap still counts in the node's status.
inline constexpr std::size_t kMaxChecksKept = 256;    // checks that did not pass, and memory-health's
inline constexpr std::size_t kMaxGpus = 256;          // GPUs of "gpus" and "devices", bandwidth figures / 3
inline constexpr std::size_t kMaxCapabilities = 128;  // distinct capability names
inline constexpr std::size_t kMaxTextBytes = 1024;    // a reason, remedy, name or version: cut past it

// Which cap of one report was reached (NodeReport::capped, a set of these bits).
enum CapReached : unsigned { kCapChecks = 1, kCapGpus = 2, kCapCapabilities = 4, kCapBandwidth = 8 };

// A GPU as a doctor report's "gpus" list names it.
struct ReportedGpu {
    long long ordinal = -1;
    std::string uuid, pci_bus_id;
    std::optional<int> nvml_index;
};

// A doctor check that did not pass or skip, or a memory-health check (whatever its status).
struct ReportedCheck {
    std::string check;
    doctor::CheckStatus status = doctor::CheckStatus::fail;
    std::optional<int> device;
    bool names_gpu = false;  // the check carries its GPU's uuid itself (else the report's "gpus" list does)
    std::string uuid, pci_bus_id;
    std::optional<int> nvml_index;
    std::string reason, remedy;
    std::string details_uuid;  // details.uuid (memory-health's GPU)
};

// A GPU's measured bandwidth, as doctor's host-bandwidth or memory-bandwidth check gives it.
struct ReportedBandwidth {
    std::optional<int> device;
    std::string uuid;
    std::string path;  // "h2d", "d2h", "d2d"; "h2d_all", "d2h_all": the node's sum with every GPU at once
    double gbps = 0;
    std::optional<double> limit_gbps;  // the limit the check held it against
};

// A report's capabilities: each name with every GPU's value as text.
using Capabilities = std::map<std::string, std::set<std::string>>;

// The one copy of `c` (interned.hpp): reports alike share it, and it goes with the last of them.
std::shared_ptr<const Capabilities> shared(Capabilities c);

// One doctor or devices report of a node.
struct NodeReport {
    std::size_t source = 0;  // index into the inputs' names
    int document = 0;        // its place in that input, from 1
    ReportKind kind = ReportKind::doctor;
    std::string host;
    std::string timestamp;
    std::optional<std::chrono::system_clock::time_point> when;  // the timestamp parsed; none where it does not
    bool ok = true;
    std::string first_error;  // errors[0].message of a report that was not ok
    bool driver_loaded = false;
    std::string driver_version = "?", tool_version = "?";
    std::optional<long long> device_count;
    // doctor: the worst of the run's own status and its checks' (never milder than a check says).
    NodeStatus status = NodeStatus::unknown;
    bool run_status = false;  // doctor: the report gives the run's own status (a complete run wrote it)
    std::vector<ReportedGpu> gpus;
    std::vector<ReportedCheck> checks;         // doctor: in the report's order
    std::vector<ReportedBandwidth> bandwidth;  // doctor: each figure of its bandwidth checks
    bool bandwidth_sums = false;               // doctor: its sums with every GPU at once are among them
    std::optional<std::string> kernel_module;
    std::vector<std::string> device_names;
    Capabilities capabilities;  // key -> every GPU's value as text, while the report is decoded
    // The same once decoded, shared with every report whose capabilities are alike (most of a fleet's):
    // a node costs a pointer, not its own copy of a few dozen names and values.
    std::shared_ptr<const Capabilities> shared_capabilities;
    std::string malformed;  // why the report cannot be used as cumemctl writes it; "" when it can
    unsigned capped = 0;    // the caps reached (CapReached bits)
    // Who made it, where it came in a MUNGE credential that munged accepted; its time is then `when`.
    std::optional<MungeProof> proof;
};

// `text` cut to kMaxTextBytes (at a character's start), its cap named: "... [cut at 1024 bytes]".
std::string bounded_text(std::string text);

// A fabric-matrix report: its node and results, read back (matrix/matrix_results.hpp), for the matrix.
struct MatrixReport {
    std::size_t source = 0;
    std::string host;
    std::optional<matrix::MatrixResults> results;      // none where they hold nothing to read, or cannot be read
    std::optional<matrix::UnreadablePart> unreadable;  // the part that is not of the schema's types
    std::string refused;                               // why a rank's report is not read (MatrixReadBack)
};

}  // namespace cumemctl::fleet
