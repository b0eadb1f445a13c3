// `cumemctl fleet FILE...`: one summary of many nodes' doctor and devices reports.
#include <algorithm>
#include <memory>
#include <stdexcept>
#include <optional>

#include <fmt/format.h>

#include "base/setting.hpp"
#include "command.hpp"
#include "fleet/fleet.hpp"
#include "fleet/fleet_results.hpp"
#include "fleet/munge.hpp"
#include "matrix/matrix.hpp"
#include "matrix/matrix_results.hpp"
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
    bool nodelist = false;            // --format nodelist: the drain list is the output

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
    // The drain list is bounded by the nodes known: without them, reports could put any number of names
    // on it (more than scontrol takes in one list, and then it drains none).
    if (nodelist && expect.empty()) {
        throw Error(ExitCode::usage, "--format nodelist needs --expect",
                    "name the nodes that should have reported (--expect \"$SLURM_JOB_NODELIST\"): only they can be "
                    "on the drain list");
    }
    if (require_signed && expect.empty()) {
        throw Error(ExitCode::usage, "--require-signed needs --expect",
                    "name the nodes that should have reported: a signed report is checked against its host's "
                    "addresses, and only a node known is looked up");
    }
    // Missing stays missing: an old signed report, copied in again, must not make a hung node present.
    if (require_signed && max_age.empty()) {
        throw Error(ExitCode::usage, "--require-signed needs --max-age",
                    "give the age a report may have (--max-age 1h): a signed report of any age would make a node "
                    "that stopped reporting present");
    }
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

// The matrix of every fabric-matrix run whose ranks' reports are among the inputs (folded as they were
// read). A run is built only where its reports hold rows (each as long as the run has ranks) for at least
// half of its ranks, so that no report can claim more ranks than the inputs hold and make fleet build a
// matrix of them. A run whose reports count different numbers of ranks fails, built or not (RunInputs).
void add_rank_matrices(Report& report, FleetInputs& inputs, FleetResults& results) {
    for (const std::size_t source : inputs.unreadable_ranks) {
        add_problem(inputs, results.input_problems, source,
                    "a fabric-matrix report whose results, or their mode, run, rank or ranks, are not of the shape "
                    "the schema gives");
    }
    for (const auto& [input, first_source, disputed] : inputs.rank_runs.take()) {
        // A run whose reports count different numbers of ranks fails, with a matrix or without.
        if (disputed) report.mark_failed();
        if (static_cast<std::size_t>(input.ranks) > 2 * std::max<std::size_t>(input.rows.size(), 1)) {
            results.input_problems.push_back(
                {inputs.sources[first_source],
                 fmt::format("fabric-matrix run '{}' counts {} ranks, but its reports hold rows of {}: "
                             "no matrix is built of it",
                             input.run, input.ranks, input.rows.size())});
            continue;
        }
        matrix::Matrix m = matrix::build_matrix(input);
        if (!m.passed()) report.mark_failed();
        results.fabric_matrices.push_back(std::move(m));
    }
}

// The matrix of every fabric-matrix run whose ranks' reports are among the inputs, and of every report
// that holds a whole matrix already (--local on one node, --summary of a folder). A --summary is left out
// where the ranks' reports of its run are here too and built the same matrix, as far as hiding nothing
// goes: of as many ranks, and failing where the summary fails (a rank report that names the run of a
// failing summary and passes hides no failure). A matrix with a failed pair fails the fleet (exit 1), as
// a node does.
void add_fabric_matrices(Report& report, FleetInputs& inputs, FleetResults& results) {
    add_rank_matrices(report, inputs, results);
    const std::size_t rank_built = results.fabric_matrices.size();
    const auto built_from_ranks = [&](const matrix::Matrix& summary) {
        for (std::size_t i = 0; i < rank_built; ++i) {
            const matrix::Matrix& m = results.fabric_matrices[i];
            if (m.run == summary.run && m.ranks == summary.ranks && (summary.passed() || !m.passed())) return true;
        }
        return false;
    };
    for (const auto& r : inputs.matrices) {
        if (r.unreadable == matrix::UnreadablePart::matrix)
            add_problem(inputs, results.input_problems, r.source,
                        "a fabric-matrix report whose matrix is not of the shape the schema gives: it is left out");
        if (!r.results || !r.results->matrix) continue;
        const matrix::Matrix& m = *r.results->matrix;
        const bool summary = std::holds_alternative<matrix::MatrixResults::Summary>(r.results->mode);
        if (summary && built_from_ranks(m)) continue;
        results.whole_matrices.push_back(
            {inputs.sources[r.source], r.host, std::string(matrix::mode_name(*r.results))});
        if (!m.passed()) report.mark_failed();
        results.fabric_matrices.push_back(m);
    }
    say_left_out(inputs, results.input_problems);  // the first 20 of an input listed, as its others are
}

// libmunge and munged, for the MUNGE credentials among the inputs: none where libmunge cannot be
// loaded (the credentials are input problems then). Under --require-signed, no libmunge or no munged
// answering is exit 3: no report could count.
std::unique_ptr<Munge> load_munge(const FleetOptions& opts, FleetInputs& inputs) {
    std::unique_ptr<Munge> munge;
    try {
        munge = std::make_unique<Munge>(opts.munge_socket);
    } catch (const Error&) {
        throw;  // a refused socket
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
        inputs.admit = [&fold](const std::string& host, const std::optional<MungeProof>& proof, std::size_t source,
                               int document) { return fold.admits(host, proof, source, document); };
        for (const auto& path : opts.inputs) read_input(path, inputs);
        const auto shared = std::make_shared<FleetResults>();
        FleetResults& results = *shared;
        results.summary = fold.finish(inputs);
        results.inputs = static_cast<int>(opts.inputs.size());
        results.slow_margin = expect.slow_margin;
        report.results = shared;  // before the matrices are read: the nodes' drain list stays whatever follows
        const FleetSummary& summary = results.summary;
        // The drain list (FleetResults::nodelist) is the nodes' alone: nothing read after them takes a node off it.
        if (any_failing(summary)) report.mark_failed();
        results.input_problems = inputs.problems;
        results.input_problems.insert(results.input_problems.end(), summary.problems.begin(), summary.problems.end());
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
    });
}

}  // namespace

void register_fleet(CLI::App& root, const Globals& globals, Runner& runner) {
    auto opts = std::make_shared<FleetOptions>();
    CLI::App* app = root.add_subcommand(
        "fleet", "summarise many nodes' doctor, devices and fabric-matrix reports (JSON files, - for stdin)");
    app->add_option("reports", opts->inputs,
                    "report files (JSON from --json; several in one file are fine), - for stdin")
        ->required()
        ->type_name("FILE");
    app->add_option("--expect", opts->expect,
                    "the nodes that should have reported, as Slurm writes them (gpu[001-300]): one without a report "
                    "is missing, and fails; --format nodelist needs it")
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
                  "every other report is as if not sent (needs --expect and --max-age)");
    app->add_option("--munge-socket", opts->munge_socket, "munged's socket (libmunge's default without it)")
        ->type_name("PATH");
    app->callback([opts, &runner, &globals] {
        runner = [opts, &globals] {
            opts->nodelist = globals.output == OutputFormat::nodelist;
            return run_fleet(*opts);
        };
    });
}

}  // namespace cumemctl::cmd
