// `cumemctl fleet FILE...`: one summary of many nodes' doctor and devices reports.
#include <algorithm>
#include <map>
#include <memory>
#include <stdexcept>
#include <optional>

#include <fmt/format.h>

#include "base/enum_words.hpp"
#include "base/setting.hpp"
#include "command.hpp"
#include "commands.hpp"
#include "fleet/fleet.hpp"
#include "fleet/fleet_results.hpp"
#include "fleet/munge.hpp"
#include "matrix/matrix.hpp"
#include "matrix/matrix_results.hpp"
#include "report/fleet_properties.hpp"
#include "util/hostlist.hpp"

namespace cumemctl::cmd {
namespace {

using namespace cumemctl::fleet;

// The options as typed.
struct FleetOptions {
    std::vector<std::string> inputs;
    std::string expect;               // --expect NODELIST
    std::string max_age;              // --max-age DURATION
    std::string slow_margin = "15%";  // --slow-margin: how far below the median a node is slow
    bool require_signed = false;      // --require-signed: only reports root signed on their host count
    std::string munge_socket;         // --munge-socket PATH: munged's socket (libmunge's default if "")

    // --expect and --max-age checked before any report is read (usage errors).
    Expectations check() const;
};

// A number and what follows it ("30m" -> 30, "m"); none where the text does not start with a number.
std::optional<std::pair<double, std::string>> number_and_unit(const std::string& text) {
    std::size_t used = 0;
    try {
        const double value = std::stod(text, &used);
        return std::make_pair(value, text.substr(used));
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

// "3600", "90s", "30m", "2h", "7d" in seconds; a usage error otherwise.
double parse_age(const std::string& text) {
    const auto n = number_and_unit(text);
    const std::string unit = n ? n->second : "";
    const double scale = unit.empty() || unit == "s" ? 1
                         : unit == "m"               ? 60
                         : unit == "h"               ? 3600
                         : unit == "d"               ? 86400
                                                     : 0;
    if (!n || scale == 0 || !(n->first > 0)) {
        throw Error(ExitCode::usage, fmt::format("invalid --max-age '{}'", text),
                    "give an age above 0 in seconds, or with a unit: 90s, 30m, 2h, 7d");
    }
    return n->first * scale;
}

// --slow-margin: "15%" or 0.15, above 0 and below 1; a usage error otherwise.
double parse_margin(const std::string& text) {
    const auto n = number_and_unit(text);
    const double value = !n ? -1 : n->second == "%" ? n->first / 100 : n->second.empty() ? n->first : -1;
    if (!(value > 0 && value < 1)) {
        throw Error(ExitCode::usage, fmt::format("invalid --slow-margin '{}'", text),
                    "give a fraction of the fleet's median above 0 and below 1: 15% or 0.15");
    }
    return value;
}

Expectations FleetOptions::check() const {
    Expectations e;
    if (!expect.empty()) e.hosts = expand_hostlist(expect, "--expect");
    if (!max_age.empty()) {
        e.max_age_seconds = parse_age(max_age);
        e.max_age_name = "--max-age " + max_age;
    }
    e.slow_margin = parse_margin(slow_margin);
    e.require_signed = require_signed;
    return e;
}

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

void add_tables(Report& report, const FleetSummary& s) {
    report.tables.push_back(nodes_table(s));
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
        report.tables.push_back(std::move(checks));
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
        report.tables.push_back(std::move(diffs));
    }
}

// The run named at the top of a report's results: a rank's, or a --summary's.
std::optional<std::string> run_of(const MatrixReport& m) {
    if (!m.results) return std::nullopt;
    if (const auto* rank = std::get_if<matrix::MatrixResults::Rank>(&m.results->mode)) return rank->id.run;
    if (const auto* summary = std::get_if<matrix::MatrixResults::Summary>(&m.results->mode)) return summary->run;
    return std::nullopt;
}

// The matrix of every fabric-matrix run whose ranks' reports are among the inputs. A run is built only
// where its reports hold rows (each as long as the run has ranks) for at least half of its ranks, so
// that no report can claim more ranks than the inputs hold and make fleet build a matrix of them.
void add_rank_matrices(Report& report, const FleetInputs& inputs, FleetResults& results,
                       std::vector<std::string>& runs) {
    std::vector<const matrix::MatrixResults::Rank*> ranks;
    for (const auto& m : inputs.matrices) {
        if (m.unreadable == matrix::UnreadablePart::rank) {
            results.input_problems.push_back({inputs.sources[m.source],
                                              "a fabric-matrix report whose mode, run, rank or ranks "
                                              "is not of the type the schema gives"});
        } else if (m.results) {
            if (const auto* rank = std::get_if<matrix::MatrixResults::Rank>(&m.results->mode)) ranks.push_back(rank);
        }
    }
    for (const auto& input : matrix::inputs_from_reports(ranks)) {
        if (static_cast<std::size_t>(input.ranks) > 2 * std::max<std::size_t>(input.rows.size(), 1)) {
            const auto first = std::find_if(inputs.matrices.begin(), inputs.matrices.end(),
                                            [&](const MatrixReport& m) { return run_of(m) == input.run; });
            results.input_problems.push_back(
                {first == inputs.matrices.end() ? "-" : inputs.sources[first->source],
                 fmt::format("fabric-matrix run '{}' counts {} ranks, but its reports hold rows of {}: "
                             "no matrix is built of it",
                             input.run, input.ranks, input.rows.size())});
            continue;
        }
        matrix::Matrix m = matrix::build_matrix(input);
        runs.push_back(input.run);
        for (auto& t : matrix::matrix_tables(m)) report.tables.push_back(std::move(t));
        if (!m.passed()) report.mark_failed();
        results.fabric_matrices.push_back(std::move(m));
    }
}

// The matrix of every fabric-matrix run whose ranks' reports are among the inputs, and of every report
// that holds a whole matrix already (--local on one node, --summary of a folder), unless the ranks'
// reports of that run are here too. A matrix with a failed pair fails the fleet (exit 1), as a node does.
void add_fabric_matrices(Report& report, const FleetInputs& inputs, FleetResults& results) {
    std::vector<std::string> runs;
    add_rank_matrices(report, inputs, results, runs);
    Table whole{"Fabric matrices of one report each (--local, --summary)",
                {"source", "node", "mode", "pairs", "failed"},
                {},
                {}};
    for (const auto& r : inputs.matrices) {
        if (r.unreadable == matrix::UnreadablePart::matrix)
            results.input_problems.push_back({inputs.sources[r.source],
                                              "a fabric-matrix report whose matrix is not of the shape "
                                              "the schema gives: it is left out"});
        if (!r.results || !r.results->matrix || std::holds_alternative<matrix::MatrixResults::Rank>(r.results->mode))
            continue;
        const matrix::Matrix& m = *r.results->matrix;
        const bool summary = std::holds_alternative<matrix::MatrixResults::Summary>(r.results->mode);
        if (summary && std::find(runs.begin(), runs.end(), m.run) != runs.end()) continue;
        whole.rows.push_back({inputs.sources[r.source], r.host, std::string(matrix::mode_name(*r.results)),
                              std::to_string(static_cast<long long>(m.ranks) * m.ranks),
                              std::to_string(m.failed_pairs)});
        if (!m.passed()) report.mark_failed();
        results.fabric_matrices.push_back(m);
    }
    if (!whole.rows.empty()) report.tables.push_back(std::move(whole));
}

// libmunge and munged, for the MUNGE credentials among the inputs: none where libmunge cannot be
// loaded (the credentials are input problems then). Under --require-signed, no libmunge or no munged
// answering is exit 3: no report could count.
std::unique_ptr<Munge> load_munge(const FleetOptions& opts, FleetInputs& inputs) {
    std::unique_ptr<Munge> munge;
    try {
        munge = std::make_unique<Munge>(opts.munge_socket);
    } catch (const std::runtime_error& e) {
        inputs.munge_unavailable = fmt::format("libmunge cannot be loaded ({})", e.what());
        if (opts.require_signed)
            throw Error(ExitCode::unavailable, "--require-signed: " + inputs.munge_unavailable,
                        "install libmunge2 (Debian; munge-libs elsewhere) and run munged, as Slurm's nodes do");
        return nullptr;
    }
    if (opts.require_signed) {
        if (const std::string why = munge->reachable(); !why.empty())
            throw Error(ExitCode::unavailable, fmt::format("--require-signed: munged does not answer: {}", why),
                        "start munged (systemctl start munge), or name its socket with --munge-socket PATH");
    }
    inputs.munge = munge.get();
    return munge;
}

Report run_fleet(const FleetOptions& opts) {
    return run_checked("fleet", opts, [&](Report& report, const Expectations& expect) {
        FleetInputs inputs;
        const std::unique_ptr<Munge> munge = load_munge(opts, inputs);
        FleetFold fold(expect);  // each node summarised as its reports are read: no report is kept
        inputs.sink = [&fold](NodeReport r) { fold.add(std::move(r)); };
        for (const auto& path : opts.inputs) read_input(path, inputs);
        FleetResults results;
        results.summary = fold.finish(inputs);
        results.inputs = static_cast<int>(opts.inputs.size());
        results.slow_margin = expect.slow_margin;
        const FleetSummary& summary = results.summary;
        // The drain list first, from the nodes alone: nothing read after it can take a node off it.
        report.nodelist = failing_nodes(summary);
        if (any_failing(summary)) report.mark_failed();
        results.input_problems = inputs.problems;
        results.input_problems.insert(results.input_problems.end(), summary.problems.begin(), summary.problems.end());
        add_tables(report, summary);
        if (!summary.slow.empty()) report.tables.push_back(slow_table(summary, expect.slow_margin));
        add_fabric_matrices(report, inputs, results);
        // A node that failed decides the exit code (1) before an input that cannot be used is recorded,
        // so that a corrupt file never hides a failed node from a script that drains on 1; the input's
        // error is listed all the same (kind "input"). Without a failed node, such an input is exit 2,
        // naming the file, told apart from a usage error by its kind; the rest is still summarised.
        for (const auto& p : results.input_problems) {
            report.add_error(Problem{.exit_code = ExitCode::usage,
                                     .message = fmt::format("{}: {}", p.source, p.message),
                                     .remedy = fmt::format("give files that hold the output of 'cumemctl {}' or "
                                                           "'cumemctl {}' (one or more reports each)",
                                                           command_line(Command::doctor, {{Setting::json}}),
                                                           command_line(Command::devices, {{Setting::json}})),
                                     .kind = ProblemKind::input});
        }
        if (inputs.documents == 0 && results.input_problems.empty()) {
            report.add_error(Problem{.exit_code = ExitCode::failed,
                                     .message = "no report to summarise",
                                     .remedy = "give at least one report file"});
        }
        report.set_results(std::move(results));
    });
}

}  // namespace

void register_fleet(CLI::App& root, const Globals&, Runner& runner) {
    auto opts = std::make_shared<FleetOptions>();
    CLI::App* app = root.add_subcommand(
        "fleet", "summarise many nodes' doctor, devices and fabric-matrix reports (JSON files, - for stdin)");
    app->add_option("reports", opts->inputs,
                    "report files (JSON from --json; several in one file are fine), - for stdin")
        ->required()
        ->type_name("FILE");
    app->add_option("--expect", opts->expect,
                    "the nodes that should have reported, as Slurm writes them (gpu[001-300]): one without a report "
                    "is missing, and fails")
        ->type_name("NODELIST");
    app->add_option("--max-age", opts->max_age,
                    "a node whose report is older than this (3600, 30m, 2h, 7d) is stale, and fails")
        ->type_name("AGE");
    app->add_option("--slow-margin", opts->slow_margin,
                    "a node whose slowest GPU copies this much below the fleet's median of a path (15%, 0.15) is "
                    "listed as slow")
        ->type_name("FRACTION")
        ->capture_default_str();
    app->add_flag("--require-signed", opts->require_signed,
                  "count only reports that root signed with MUNGE on the node they name (doctor --json | munge); "
                  "every other report is as if not sent");
    app->add_option("--munge-socket", opts->munge_socket, "munged's socket (libmunge's default without it)")
        ->type_name("PATH");
    app->callback([opts, &runner] { runner = [opts] { return run_fleet(*opts); }; });
}

}  // namespace cumemctl::cmd
