#include "fleet/report_decode.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "doctor/evidence.hpp"
#include "fleet/interned.hpp"
#include "fleet/report_reader.hpp"
#include "report/report.hpp"
#include "util/host.hpp"
#include "util/hostlist.hpp"

namespace cumemctl::fleet {
namespace {

using Type = JsonCursor::Type;

// A report that parses but is not what cumemctl writes: its node becomes an error.
class Malformed : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The place of `key` among an object's `names`, or -1; a name given twice in one object is malformed
// (two readers could each take another of its values).
template <std::size_t N>
int member(std::string_view key, const std::array<std::string_view, N>& names, std::uint32_t& seen) {
    static_assert(N <= 32);
    const auto it = std::find(names.begin(), names.end(), key);
    if (it == names.end()) return -1;
    const auto bit = std::uint32_t{1} << (it - names.begin());
    if ((seen & bit) != 0) throw Malformed(fmt::format("\"{}\" is given twice in one object", key));
    seen |= bit;
    return static_cast<int>(it - names.begin());
}

std::string text_or_null(JsonCursor& c) {
    if (c.peek() != Type::null) return bounded_text(c.read_string());
    c.read_null();
    return {};
}

// A whole number from `low` up to INT_MAX, or none for null.
std::optional<int> int_or_null(JsonCursor& c, long long low = 0) {
    if (c.peek() == Type::null) {
        c.read_null();
        return std::nullopt;
    }
    const long long v = c.read_integer();
    if (v < low || v > INT_MAX) throw JsonTypeError(fmt::format("{} is out of range", v));
    return static_cast<int>(v);
}

// A value as a table cell: yes/no, unknown for null, lists joined with commas ("none" when empty).
std::string value_text(JsonCursor& c) {
    switch (c.peek()) {
        case Type::boolean:
            return c.read_bool() ? "yes" : "no";
        case Type::null:
            c.read_null();
            return "unknown";
        case Type::string:
            return bounded_text(c.read_string());
        case Type::array: {
            std::string joined;
            bool any = false;
            c.begin_array();
            while (c.next_item()) {
                std::string part = value_text(c);
                if (joined.size() <= kMaxTextBytes) joined += (any ? "," : "") + part;
                any = true;
            }
            return any ? bounded_text(std::move(joined)) : "none";
        }
        default: {
            // A number or an object: its compact form, so that nodes that write it apart alike compare
            // equal; one past the text kept is its raw text, cut, never built into a tree (a few MB of
            // nested lists would take a hundred MB).
            const std::string_view raw = c.raw_value();
            if (raw.size() > 4 * kMaxTextBytes) return bounded_text(std::string(raw));
            try {
                return bounded_text(nlohmann::json::parse(raw).dump());
            } catch (const nlohmann::json::exception&) {
                throw JsonTypeError("a value that is not valid JSON text");
            }
        }
    }
}

// Capabilities into `into`, each name's values as a set: at most kMaxCapabilities names, and as many
// values of a name as GPUs (kMaxGpus); past them `capped` says so.
void read_capabilities(JsonCursor& c, std::map<std::string, std::set<std::string>>& into, unsigned& capped) {
    c.begin_object();
    std::string key;
    while (c.next_key(key)) {
        if (key == "host_numa_id") {
            c.skip();
            continue;
        }
        auto it = into.find(key);
        if (it == into.end() && into.size() >= kMaxCapabilities) {
            capped |= kCapCapabilities;
            c.skip();
            continue;
        }
        if (it == into.end()) it = into.emplace(bounded_text(key), std::set<std::string>{}).first;
        if (it->second.size() >= kMaxGpus) {
            capped |= kCapGpus;
            c.skip();
            continue;
        }
        it->second.insert(value_text(c));
    }
}

// The most GB/s a figure may say: far above any memory path there is; more is no measurement.
constexpr double kMostGbps = 1e6;

// Reads the fields of doctor's evidence that fleet reads (doctor::kReadByFleet), by their names in the
// evidence type's field description (doctor/evidence.hpp); the other members are skipped unbuilt.
class EvidenceReader {
public:
    EvidenceReader(JsonCursor& c, unsigned& capped, Capabilities& capabilities)
        : c_(c), capped_(capped), capabilities_(capabilities) {}

    // The members of the object at the cursor into `into`; `where` names it in what is thrown ("details").
    template <class E>
    void object(E& into, const std::string& where) {
        if (c_.peek() != Type::object) throw Malformed(fmt::format("{} is not an object", where));
        c_.begin_object();
        std::uint64_t seen = 0;
        std::string key;
        while (c_.next_key(key)) {
            int index = 0;
            bool found = false;
            E::fields(into, [&](const char* name, auto& member, auto... mark) {
                field<sizeof...(mark) != 0>(key, where, name, member, seen, index, found);
            });
            if (!found) c_.skip();
        }
    }

private:
    // One field of the description against `key`: `read` where fleet reads it (kReadByFleet).
    template <bool read, class T>
    void field(const std::string& key, const std::string& where, const char* name, T& member, std::uint64_t& seen,
               int& index, bool& found) {
        if constexpr (requires { T::fields(member, [](const char*, auto&, auto...) {}); }) {
            if (*name == '\0') {  // kMerged: its fields sit beside the holder's
                T::fields(member, [&](const char* inner, auto& m, auto... mark) {
                    field<sizeof...(mark) != 0>(key, where, inner, m, seen, index, found);
                });
                return;
            }
        }
        const int mine = index++;
        if (found || key != name) return;
        if (mine < 64) {
            const auto bit = std::uint64_t{1} << mine;
            if ((seen & bit) != 0) throw Malformed(fmt::format("\"{}\" is given twice in one object", key));
            seen |= bit;
        }
        if constexpr (!read) {
            return;  // skipped unbuilt
        } else {
            found = true;
            const Path path{where, key};
            try {
                value(member, path);
            } catch (const JsonTypeError& e) {
                throw Malformed(fmt::format("{}: {}", path.text(), e.what()));
            }
        }
    }

    // Where a value is, for what is thrown: "details.at_once" and "gpus" (made into text only then).
    struct Path {
        const std::string& where;
        const std::string& key;
        std::string text() const { return where + "." + key; }
    };

    template <class T>
    void value(doctor::Maybe<T>& v, const Path& where) {
        value(v.emplace(), where);  // written only where there is one: null is no value
    }
    template <class T>
    void value(std::optional<T>& v, const Path& where) {
        if (c_.peek() == Type::null) {
            c_.read_null();
            v.reset();
            return;
        }
        value(v.emplace(), where);
    }
    // A bandwidth figure: a number from 0 to kMostGbps, else the report is malformed.
    void value(doctor::Gbps& v, const Path& where) {
        if (c_.peek() != Type::number) throw Malformed(fmt::format("{} is not a number", where.text()));
        v.value = c_.read_number();
        if (!(v.value >= 0 && v.value <= kMostGbps))
            throw Malformed(fmt::format("{} is {}, not a bandwidth", where.text(), v.value));
    }
    void value(doctor::GpuCount& v, const Path& where) {
        if (c_.peek() != Type::number) throw Malformed(fmt::format("{} is not a number", where.text()));
        const double n = c_.read_number();
        if (!(n >= 1 && n <= static_cast<double>(kMaxGpus) && n == std::floor(n)))
            throw Malformed(fmt::format("{} is {}, not a GPU count", where.text(), n));
        v.value = static_cast<std::size_t>(n);
    }
    void value(std::string& v, const Path&) { v = text_or_null(c_); }
    // Names: as many as GPUs (kMaxGpus); past them `capped` says so.
    void value(std::vector<std::string>& v, const Path&) {
        c_.begin_array();
        while (c_.next_item()) {
            std::string name = bounded_text(c_.read_string());
            if (v.size() < kMaxGpus)
                v.push_back(std::move(name));
            else
                capped_ |= kCapGpus;
        }
    }
    // Capabilities: each name's value as text (another tool version's names and values too).
    void value(std::vector<gpu::Capability>&, const Path&) { read_capabilities(c_, capabilities_, capped_); }
    template <class T>
    void value(T& v, const Path& where) requires requires {
        T::fields(v, [](const char*, auto&, auto...) {});
    }
    { object(v, where.text()); }

    JsonCursor& c_;
    unsigned& capped_;
    Capabilities& capabilities_;
};

// The details at the cursor as the evidence of family E.
template <class E>
doctor::Evidence read_evidence(JsonCursor& c, unsigned& capped, Capabilities& capabilities) {
    E e;
    EvidenceReader(c, capped, capabilities).object(e, "details");
    return e;
}

// A bandwidth check's figures into the report: measured alone (not beside another process's work, busy,
// nor cut short), in the details' order, with the node's sums with every GPU at once (the first check's).
void add_figures(const doctor::CopyEvidence& e, const ReportedCheck& k, NodeReport& r) {
    const bool measured = k.status == doctor::CheckStatus::pass || k.status == doctor::CheckStatus::warn ||
                          k.status == doctor::CheckStatus::fail;
    if (!measured) return;
    using gpu::CopyPath;
    for (const CopyPath path : {CopyPath::device_to_device, CopyPath::device_to_host, CopyPath::host_to_device}) {
        const std::optional<double> gbps = e.gbps(path);
        if (!gbps) continue;
        if (r.bandwidth.size() < 3 * kMaxGpus)
            r.bandwidth.push_back({k.device, k.uuid, gpu::path_name(path), *gbps, e.limit()});
        else
            r.capped |= kCapBandwidth;
    }
    // Every GPU's check repeats the node's sums: the first one counts, as the node's own figure, held
    // against its GPUs' limits added up (nodes of as many GPUs on one kind of link compare).
    if (r.bandwidth_sums || !e.at_once || !e.at_once->gpus) return;
    const doctor::AtOnceEvidence& at_once = *e.at_once;
    if (!at_once.d2h.sum_gbps && !at_once.h2d.sum_gbps) return;
    r.bandwidth_sums = true;
    std::optional<double> sum_limit;
    if (const auto limit = e.limit()) sum_limit = *limit * static_cast<double>(at_once.gpus->value);
    if (at_once.d2h.sum_gbps)
        r.bandwidth.push_back({std::nullopt, "", "d2h_all", at_once.d2h.sum_gbps->value, sum_limit});
    if (at_once.h2d.sum_gbps)
        r.bandwidth.push_back({std::nullopt, "", "h2d_all", at_once.h2d.sum_gbps->value, sum_limit});
}

// Capabilities of one GPU into the report's, each name's values as a set, within the caps.
void add_capabilities(const Capabilities& capabilities, NodeReport& r) {
    for (const auto& [cap, values] : capabilities) {
        auto it = r.capabilities.find(cap);
        if (it == r.capabilities.end() && r.capabilities.size() >= kMaxCapabilities) {
            r.capped |= kCapCapabilities;
            continue;
        }
        if (it == r.capabilities.end()) it = r.capabilities.emplace(cap, std::set<std::string>{}).first;
        for (const auto& v : values) {
            if (it->second.size() < kMaxGpus)
                it->second.insert(v);
            else
                r.capped |= kCapGpus;
        }
    }
}

// The details at the cursor, read as the evidence of check `check`'s family where fleet uses it (its
// capabilities into `capabilities`); skipped otherwise.
doctor::Evidence read_details(JsonCursor& c, std::string_view check, unsigned& capped, Capabilities& capabilities) {
    if (check == doctor::kCheckDriver) return read_evidence<doctor::DriverEvidence>(c, capped, capabilities);
    if (check == doctor::kCheckDevices) return read_evidence<doctor::DevicesEvidence>(c, capped, capabilities);
    if (check == doctor::kCheckCapabilities)
        return read_evidence<doctor::CapabilitiesEvidence>(c, capped, capabilities);
    if (check == doctor::kCheckMemoryHealth)
        return read_evidence<doctor::MemoryHealthEvidence>(c, capped, capabilities);
    if (check == doctor::kCheckFabric) return read_evidence<doctor::FabricEvidence>(c, capped, capabilities);
    if (check == doctor::kCheckHostBandwidth || check == doctor::kCheckMemoryBandwidth)
        return read_evidence<doctor::CopyEvidence>(c, capped, capabilities);
    c.skip();
    return doctor::NoEvidence{};
}

// What a check's evidence gives the report: the kernel module, the GPUs' names, the check's GPU, the
// capabilities, the bandwidth figures.
void use_details(doctor::Evidence& evidence, const Capabilities& capabilities, ReportedCheck& k, NodeReport& r) {
    if (auto* e = std::get_if<doctor::DriverEvidence>(&evidence)) {
        if (e->kernel_module && *e->kernel_module) r.kernel_module = std::move(**e->kernel_module);
    } else if (auto* d = std::get_if<doctor::DevicesEvidence>(&evidence)) {
        for (auto& n : d->names.value_or(std::vector<std::string>{})) {
            if (r.device_names.size() < kMaxGpus)
                r.device_names.push_back(std::move(n));
            else
                r.capped |= kCapGpus;
        }
    } else if (auto* c = std::get_if<doctor::CapabilitiesEvidence>(&evidence)) {
        k.details_uuid = std::move(c->device.uuid);
        add_capabilities(capabilities, r);
    } else if (auto* h = std::get_if<doctor::MemoryHealthEvidence>(&evidence)) {
        k.details_uuid = std::move(h->uuid);
    } else if (auto* f = std::get_if<doctor::FabricEvidence>(&evidence)) {
        k.details_uuid = std::move(f->uuid);
    } else if (auto* b = std::get_if<doctor::CopyEvidence>(&evidence)) {
        add_figures(*b, k, r);
    }
}

constexpr std::array<std::string_view, 9> kCheckKeys{"check",      "status", "device", "uuid",   "pci_bus_id",
                                                     "nvml_index", "reason", "remedy", "details"};

// One check of a doctor report; its details feed the report's properties.
ReportedCheck read_check(JsonCursor& c, NodeReport& r) {
    ReportedCheck k;
    std::optional<std::string> name, status;
    // Its details, read where they come when the check's name came first (as doctor writes it), else
    // kept as text until the name is known.
    doctor::Evidence evidence;
    Capabilities capabilities;
    std::string_view later;
    c.begin_object();
    std::uint32_t seen = 0;
    std::string key;
    while (c.next_key(key)) {
        switch (member(key, kCheckKeys, seen)) {
            case 0:
                name = bounded_text(c.read_string());
                break;
            case 1:
                status = bounded_text(c.read_string());
                break;
            case 2:
                k.device = int_or_null(c);
                break;
            case 3:
                k.names_gpu = true;
                k.uuid = text_or_null(c);
                break;
            case 4:
                k.pci_bus_id = text_or_null(c);
                break;
            case 5:
                k.nvml_index = int_or_null(c);
                break;
            case 6:
                k.reason = text_or_null(c);
                break;
            case 7:
                k.remedy = text_or_null(c);
                break;
            case 8:
                if (name)
                    evidence = read_details(c, *name, r.capped, capabilities);
                else
                    later = c.raw_value();
                break;
            default:
                c.skip();
        }
    }
    k.check = name.value_or("?");
    const auto parsed = doctor::parse_status(status.value_or(""));
    if (!parsed) throw Malformed(fmt::format("check '{}' has status '{}'", k.check, status.value_or("")));
    k.status = *parsed;
    if (!later.empty()) {
        JsonCursor d(later, JsonCursor::kMaxDepth);
        evidence = read_details(d, k.check, r.capped, capabilities);
    }
    use_details(evidence, capabilities, k, r);
    return k;
}

constexpr std::array<std::string_view, 4> kGpuKeys{"ordinal", "uuid", "pci_bus_id", "nvml_index"};

ReportedGpu read_gpu(JsonCursor& c) {
    ReportedGpu g;
    c.begin_object();
    std::uint32_t seen = 0;
    std::string key;
    while (c.next_key(key)) {
        switch (member(key, kGpuKeys, seen)) {
            case 0:
                g.ordinal = c.read_integer();
                break;
            case 1:
                g.uuid = text_or_null(c);
                break;
            case 2:
                g.pci_bus_id = text_or_null(c);
                break;
            case 3:
                g.nvml_index = int_or_null(c);
                break;
            default:
                c.skip();
        }
    }
    return g;
}

// One GPU of a devices report: its name and capabilities.
void read_device(JsonCursor& c, NodeReport& r) {
    c.begin_object();
    std::string name, key;
    std::uint32_t seen = 0;
    constexpr std::array<std::string_view, 2> kKeys{"name", "capabilities"};
    while (c.next_key(key)) {
        switch (member(key, kKeys, seen)) {
            case 0:
                name = text_or_null(c);
                break;
            case 1:
                read_capabilities(c, r.capabilities, r.capped);
                break;
            default:
                c.skip();
        }
    }
    if (r.device_names.size() < kMaxGpus)
        r.device_names.push_back(std::move(name));
    else
        r.capped |= kCapGpus;
}

// A list, each item read by `item`, which names the item in what it throws.
template <class F>
void read_list(JsonCursor& c, std::string_view what, F item) {
    c.begin_array();
    for (int i = 0; c.next_item(); ++i) {
        try {
            item(c);
        } catch (const JsonTypeError& e) {
            throw Malformed(fmt::format("{}[{}]: {}", what, i, e.what()));
        }
    }
}

constexpr std::array<std::string_view, 5> kResultKeys{"status", "device_count", "gpus", "checks", "devices"};

// The results of a doctor or devices report. Returns the run's own status text (doctor), if any.
std::optional<std::string> read_results(JsonCursor& c, NodeReport& r, NodeStatus& worst) {
    std::optional<std::string> status;
    c.begin_object();
    std::uint32_t seen = 0;
    std::string key;
    while (c.next_key(key)) {
        switch (member(key, kResultKeys, seen)) {
            case 0:
                status = text_or_null(c);
                break;
            case 1: {
                if (c.peek() == Type::number) {
                    r.device_count = c.read_integer();
                } else {
                    c.skip();
                }
                break;
            }
            case 2:
                read_list(c, "gpus", [&](JsonCursor& g) {
                    ReportedGpu gpu = read_gpu(g);
                    if (r.gpus.size() < kMaxGpus)
                        r.gpus.push_back(std::move(gpu));
                    else
                        r.capped |= kCapGpus;
                });
                break;
            case 3:
                read_list(c, "checks", [&](JsonCursor& k) {
                    ReportedCheck check = read_check(k, r);
                    if (node_severity(node_status(check.status)) > node_severity(worst))
                        worst = node_status(check.status);
                    // What did not pass, and every GPU's memory health.
                    if ((check.status != doctor::CheckStatus::pass && check.status != doctor::CheckStatus::skip) ||
                        check.check == doctor::kCheckMemoryHealth) {
                        if (r.checks.size() < kMaxChecksKept)
                            r.checks.push_back(std::move(check));
                        else
                            r.capped |= kCapChecks;
                    }
                });
                break;
            case 4:
                // A devices report lists its GPUs here; doctor lists the ordinals it examined.
                if (r.kind == ReportKind::devices) {
                    read_list(c, "devices", [&](JsonCursor& d) { read_device(d, r); });
                } else {
                    c.skip();
                }
                break;
            default:
                c.skip();
        }
    }
    return status;
}

// The raw text of each member of a report's envelope that fleet reads.
struct Envelope {
    std::string_view schema, command, host, timestamp, ok, errors, driver, tool, results;
};

// A doctor or devices report's results, decoded while the envelope was read (its command came first,
// as cumemctl writes it), so that the bulk of a report is read once.
struct EarlyResults {
    bool decoded = false;
    NodeReport report;
    std::optional<std::string> status;
    NodeStatus worst = NodeStatus::unknown;
};

constexpr std::array<std::string_view, 9> kEnvelopeKeys{"schema", "command", "host", "timestamp", "ok",
                                                        "errors", "driver",  "tool", "results"};

std::optional<std::string> text_member(std::string_view raw, int max_depth);

// Decodes the results at the cursor into `early` where the command already read names a node's report.
bool read_results_early(JsonCursor& c, const Envelope& e, EarlyResults* early, int depth) {
    if (early == nullptr || early->decoded || e.command.empty() || !e.results.empty()) return false;
    const auto command = text_member(e.command, depth);
    if (command != "doctor" && command != "devices") return false;
    early->report.kind = command == "doctor" ? ReportKind::doctor : ReportKind::devices;
    early->status = read_results(c, early->report, early->worst);
    early->decoded = true;
    return true;
}

// Reads the top-level object, keeping each member's text; a member given twice is named in `twice`.
// A type error in results decoded early throws (JsonTypeError, Malformed): the caller reads again.
Envelope read_envelope(JsonCursor& c, std::string& twice, EarlyResults* early, int depth) {
    Envelope e;
    std::array<std::string_view*, 9> slots{&e.schema, &e.command, &e.host, &e.timestamp, &e.ok,
                                           &e.errors, &e.driver,  &e.tool, &e.results};
    c.begin_object();
    std::string key;
    while (c.next_key(key)) {
        const auto it = std::find(kEnvelopeKeys.begin(), kEnvelopeKeys.end(), key);
        if (it == kEnvelopeKeys.end()) {
            c.skip();
            continue;
        }
        std::string_view& slot = *slots[static_cast<std::size_t>(it - kEnvelopeKeys.begin())];
        if (!slot.empty() && twice.empty()) twice = key;
        const std::size_t start = c.offset();
        if (&slot == &e.results && read_results_early(c, e, early, depth)) {
            slot = c.read_since(start);
            continue;
        }
        slot = c.raw_value();
    }
    return e;
}

// Reads one member's text with `read`; a value of the wrong type is malformed, naming the member.
template <class F>
void decode_member(std::string_view raw, std::string_view name, int max_depth, F read) {
    if (raw.empty()) return;
    JsonCursor c(raw, max_depth);
    try {
        read(c);
    } catch (const JsonTypeError& e) {
        throw Malformed(fmt::format("{}: {}", name, e.what()));
    }
}

// A field that is text, or none (absent, or another type).
std::optional<std::string> text_member(std::string_view raw, int max_depth) {
    std::optional<std::string> out;
    if (raw.empty()) return out;
    JsonCursor c(raw, max_depth);
    if (c.peek() == Type::string) out = bounded_text(c.read_string());
    return out;
}

void read_driver_and_tool(const Envelope& e, NodeReport& r, int depth) {
    decode_member(e.driver, "driver", depth, [&](JsonCursor& c) {
        c.begin_object();
        std::string key, version = "?";
        while (c.next_key(key)) {
            if (key == "loaded") {
                r.driver_loaded = c.read_bool();
            } else if (key == "version_string" && c.peek() == Type::string) {
                version = bounded_text(c.read_string());
            } else {
                c.skip();
            }
        }
        r.driver_version = r.driver_loaded ? version : "not loaded";
    });
    if (e.driver.empty()) r.driver_version = "not loaded";
    decode_member(e.tool, "tool", depth, [&](JsonCursor& c) {
        c.begin_object();
        std::string key;
        while (c.next_key(key)) {
            if (key == "version" && c.peek() == Type::string) {
                r.tool_version = bounded_text(c.read_string());
            } else {
                c.skip();
            }
        }
    });
}

void read_outcome(const Envelope& e, NodeReport& r, int depth) {
    decode_member(e.ok, "ok", depth, [&](JsonCursor& c) { r.ok = c.read_bool(); });
    decode_member(e.errors, "errors", depth, [&](JsonCursor& c) {
        c.begin_array();
        for (bool first = true; c.next_item(); first = false) {
            if (!first || c.peek() != Type::object) {
                c.skip();
                continue;
            }
            c.begin_object();
            std::string key;
            while (c.next_key(key)) {
                if (key == "message" && c.peek() == Type::string) {
                    r.first_error = bounded_text(c.read_string());
                } else {
                    c.skip();
                }
            }
        }
    });
}

// A doctor report's status: the worst of its own and its checks', never milder than a check says.
void judge_doctor(NodeReport& r, const std::optional<std::string>& status, NodeStatus worst) {
    NodeStatus own = NodeStatus::unknown;
    if (status) {
        own = parse_node_status(*status);
        if (own == NodeStatus::unknown) throw Malformed(fmt::format("its status '{}' is none of doctor's", *status));
        r.run_status = true;
    } else if (!r.ok) {
        own = NodeStatus::error;
    }
    r.status = node_severity(own) >= node_severity(worst) ? own : worst;
}

NodeReport node_report(const Envelope& e, ReportKind kind, std::string host, int depth, EarlyResults* early) {
    const bool decoded = early != nullptr && early->decoded && early->report.kind == kind;
    NodeReport r = decoded ? std::move(early->report) : NodeReport{};
    r.kind = kind;
    r.host = std::move(host);
    if (auto t = text_member(e.timestamp, depth)) {
        r.timestamp = std::move(*t);
        r.when = parse_utc_timestamp(r.timestamp);
    }
    try {
        read_outcome(e, r, depth);
        read_driver_and_tool(e, r, depth);
        std::optional<std::string> status = decoded ? early->status : std::nullopt;
        NodeStatus worst = decoded ? early->worst : NodeStatus::unknown;
        if (!decoded)
            decode_member(e.results, "results", depth, [&](JsonCursor& c) { status = read_results(c, r, worst); });
        if (kind == ReportKind::doctor) judge_doctor(r, status, worst);
        r.checks.shrink_to_fit();  // kept until the summary: a fleet holds one per node
        r.gpus.shrink_to_fit();
        // One name for GPUs of one model; the capabilities shared with the reports alike.
        std::sort(r.device_names.begin(), r.device_names.end());
        r.device_names.erase(std::unique(r.device_names.begin(), r.device_names.end()), r.device_names.end());
        r.device_names.shrink_to_fit();
    } catch (const Malformed& m) {
        r.malformed = m.what();
    }
    r.shared_capabilities = shared(std::move(r.capabilities));
    r.capabilities.clear();
    return r;
}

Decoded decode_envelope(const Envelope& e, const std::string& twice, int depth, EarlyResults* early) {
    if (text_member(e.schema, depth).value_or("") != kSchemaName)
        return NotAReport{fmt::format("not a cumemctl report (it has no \"schema\": \"{}\")", kSchemaName)};
    const auto command = text_member(e.command, depth);
    if (!command) return NotAReport{"a cumemctl report without a \"command\" that names the command it came from"};
    const auto host = text_member(e.host, depth);
    if (*command == "fabric-matrix") {
        MatrixReport m;
        m.host = host.value_or("");
        matrix::MatrixReadBack read = matrix::read_matrix_results(e.results.empty() ? "null" : e.results);
        m.results = std::move(read.results);
        m.unreadable = read.unreadable;
        m.refused = std::move(read.refused);
        return m;
    }
    if (*command != "doctor" && *command != "devices")
        return NotAReport{
            fmt::format("a report of '{}': fleet reads doctor, devices and fabric-matrix reports", *command)};
    if (twice == "host") return NotAReport{"it gives its \"host\" twice"};
    if (!host) return NotAReport{"it names no host (\"host\" is missing or not text)"};
    if (const std::string why = not_single_host(*host); !why.empty())
        return NotAReport{fmt::format("its host '{}' is not a host name: {}", *host, why)};
    NodeReport r = node_report(e, *command == "doctor" ? ReportKind::doctor : ReportKind::devices, *host, depth, early);
    if (!twice.empty() && r.malformed.empty()) r.malformed = fmt::format("it gives \"{}\" twice", twice);
    return r;
}

}  // namespace

std::shared_ptr<const Capabilities> shared(Capabilities c) {
    return interned(std::move(c));
}

std::string bounded_text(std::string text) {
    if (text.size() <= kMaxTextBytes) return text;
    std::size_t end = kMaxTextBytes;
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;  // a character's start
    const std::size_t cut = text.size() - end;
    text.resize(end);
    text += fmt::format(" [{} bytes more cut: {} are kept]", cut, kMaxTextBytes);
    return text;
}

Decoded decode_document(JsonCursor& cursor, int max_depth) {
    if (cursor.peek() != Type::object) {
        cursor.skip();
        return NotAReport{fmt::format("not a cumemctl report (it has no \"schema\": \"{}\")", kSchemaName)};
    }
    // Once, decoding the results as they come; where they hold a value of another type, again from the
    // start, keeping each member's text, so that the report's other members still name its node.
    JsonCursor again = cursor;
    try {
        std::string twice;
        EarlyResults early;
        const Envelope e = read_envelope(cursor, twice, &early, max_depth);
        return decode_envelope(e, twice, max_depth, &early);
    } catch (const JsonTypeError&) {
    } catch (const Malformed&) {
    }
    cursor = again;
    std::string twice;
    const Envelope e = read_envelope(cursor, twice, nullptr, max_depth);
    return decode_envelope(e, twice, max_depth, nullptr);
}

}  // namespace cumemctl::fleet
