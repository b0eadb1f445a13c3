// cumemctl: builds the CLI from the list of commands, parses, runs one, renders its report.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <span>
#include <sstream>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/bounded_call.hpp"
#include "base/enum_words.hpp"
#include "base/interrupt.hpp"
#include "command.hpp"
#include "command_table.hpp"
#include "csv_fields.hpp"
#include "help.hpp"
#include "setting_flags.hpp"
#include "report/csv_renderer.hpp"
#include "doctor/renderers.hpp"
#include "render/html_renderer.hpp"
#include "report/renderer.hpp"
#include "usage_words.hpp"
#include "util/atomic_file.hpp"
#include "util/phase_timing.hpp"
#include "util/printable.hpp"
#include "util/version.hpp"
#include "version_results.hpp"

namespace {

using cumemctl::ExitCode;
using cumemctl::Report;
using namespace cumemctl::cmd;

// What a command without one of the formats that only some commands write lacks, for the refusal.
constexpr auto kLackedWords = cumemctl::enum_words<OutputFormat>(
    {
        {OutputFormat::prometheus, "Prometheus output"},
        {OutputFormat::line, "one-line summary"},
        {OutputFormat::html, "HTML page"},
        {OutputFormat::junit, "JUnit report"},
        {OutputFormat::nfd, "node-feature-discovery labels"},
        {OutputFormat::nodelist, "node list"},
    },
    "output of that format");

std::string_view format_lacked(OutputFormat format) {
    return kLackedWords.word(format);
}

// "a", "a and b", "a, b and c".
std::string spoken_list(std::span<const std::string> names) {
    if (names.size() < 2) return names.empty() ? std::string() : std::string(names.front());
    return fmt::format("{} and {}", fmt::join(names.first(names.size() - 1), ", "), names.back());
}

// The output format the command line asked for, read without the parser (for errors the parser
// raised): JSON with --json, else what --format names, else the table.
OutputFormat argv_format(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--json") return OutputFormat::json;
        if (a.starts_with("--format=")) return output_format(false, a.substr(9));
        if (a == "--format" && i + 1 < argc) return output_format(false, argv[i + 1]);
    }
    return OutputFormat::table;
}

bool use_colour(const Globals& g) {
    if (g.no_color) return false;
    const char* no_color = std::getenv("NO_COLOR");
    if (no_color != nullptr && *no_color != '\0') return false;
    return isatty(STDOUT_FILENO) != 0;
}

void render(const Report& report, const Globals& globals, std::ostream& out) {
    switch (globals.output) {
        case OutputFormat::json:
            cumemctl::JsonRenderer{}.render(report, out);
            return;
        case OutputFormat::prometheus:
            cumemctl::PrometheusRenderer{}.render(report, out);
            return;
        case OutputFormat::html:
            cumemctl::HtmlRenderer{}.render(report, out);
            return;
        case OutputFormat::line:
            cumemctl::LineRenderer{}.render(report, out);
            return;
        case OutputFormat::junit:
            cumemctl::doctor::JunitRenderer{}.render(report, out);
            return;
        case OutputFormat::nfd:
            cumemctl::doctor::NfdRenderer{}.render(report, out);
            return;
        case OutputFormat::csv:
            cumemctl::CsvRenderer{csv_layout(report.command, globals.format, globals.fields)}.render(report, out);
            return;
        case OutputFormat::nodelist:
            if (const std::string list = report.results ? report.results->nodelist() : ""; !list.empty())
                out << cumemctl::printable(list) << '\n';  // nothing when no node fails
            return;
        case OutputFormat::table:
            cumemctl::TableRenderer{use_colour(globals), output_width()}.render(report, out);
            return;
    }
}

// What writing standard output so far failed with (a full disk, a closed pipe): 0 where it did not. The
// caller clears errno before the writes.
int stdout_error() {
    std::cout.flush();
    return std::cout ? 0 : (errno != 0 ? errno : EIO);
}

// `code`, or exit 1 naming the failure where standard output was not written whole (as GNU tools do):
// what was asked for is not there, whatever the command found.
int with_stdout_checked(int code, int write_error) {
    if (write_error == 0) return code;
    std::cerr << "cumemctl: error: cannot write standard output: " << std::strerror(write_error) << '\n';
    return code == 0 ? static_cast<int>(ExitCode::failed) : code;
}

int emit(const Report& done, const Globals& globals) {
    const std::optional<Report> stopped = cumemctl::cmd::stopped_report(done);
    const Report& report = stopped ? *stopped : done;
    int code = static_cast<int>(report.exit_code);
    errno = 0;  // what a failed write to stdout leaves, read below
    if (report.delivery.stdout_quiet) {
        // nothing on standard output
    } else if (!report.delivery.output_file.empty()) {
        // A reader of the file (node-feature-discovery, node_exporter's textfile collector) sees the old
        // content or the new, never a part.
        std::ostringstream text;
        render(report, globals, text);
        try {
            cumemctl::write_file_atomically(report.delivery.output_file, text.str(), 0644,
                                            cumemctl::MissingFolder::refuse);
        } catch (const cumemctl::Error& e) {
            Report failed = report;
            failed.add_error(e.problem());
            // With --json the one JSON document still comes, on stdout, since the file could not hold it.
            if (globals.output == OutputFormat::json) render(failed, globals, std::cout);
            std::cout.flush();
            cumemctl::write_problems(failed, std::cerr);
            return code == 0 ? static_cast<int>(e.problem().exit_code) : code;
        }
    } else {
        render(report, globals, std::cout);
    }
    const int write_error = stdout_error();
    cumemctl::write_problems(report, std::cerr);
    return with_stdout_checked(code, write_error);
}

// A report that holds one usage error (exit 2).
Report usage_report(std::string command, std::string message, std::string remedy) {
    Report report;
    report.command = std::move(command);
    cumemctl::Problem p;
    p.exit_code = ExitCode::usage;
    p.message = std::move(message);
    p.remedy = std::move(remedy);
    report.add_error(std::move(p));
    return report;
}

// The usage error for an output format the chosen command cannot write, or nothing when it can.
std::optional<Report> check_format(const std::string& command, const Globals& globals) {
    if (globals.json && !globals.format.empty() && parse_format(globals.format) != OutputFormat::json) {
        return usage_report(command, "--json and --format " + globals.format + " ask for two formats",
                            "give one of --json or --format table|json|prometheus|line|html|junit|nfd|nodelist|csv");
    }
    std::vector<std::string> writers;  // the commands that write the format asked for, in the table's order
    bool chosen_writes = true;
    for (const CommandEntry& c : command_table()) {
        const bool w = writes(c, globals.output);
        if (w) writers.emplace_back(cumemctl::command_name(c.command));
        if (cumemctl::command_name(c.command) == command) chosen_writes = w;
    }
    if (!chosen_writes) {
        return usage_report(command, fmt::format("'{}' has no {}", command, format_lacked(globals.output)),
                            fmt::format("--format {} works with {}; use --json here", format_name(globals.output),
                                        spoken_list(writers)));
    }
    if (globals.output == OutputFormat::csv) {
        try {
            csv_layout(command, globals.format, globals.fields);
        } catch (const cumemctl::Error& e) {
            return usage_report(command, e.problem().message, e.problem().remedy);
        }
    } else if (!globals.fields.empty()) {
        return usage_report(command, "--fields goes with --format csv", "add --format csv, or leave --fields out");
    }
    return std::nullopt;
}

// The options every command takes, into `globals`, and the root's own behaviour (help, version).
void add_global_options(CLI::App& app, Globals& globals) {
    app.name("cumemctl");
    // Before the subcommands, which take the formatter and the help flag when they are made.
    app.formatter(help_formatter());
    app.set_help_flag("-h,--help", "print this help and exit");
    app.require_subcommand(1);
    app.set_version_flag("--version",
                         fmt::format("cumemctl {} (git {})", cumemctl::tool_version(), cumemctl::git_commit()),
                         "print the version and exit");
    app.add_flag("--json", globals.json, "write one JSON document to stdout")->configurable(false);
    app.add_option("--format", globals.format,
                   "table (the default), json, csv[,noheader][,nounits], prometheus, line, html, junit, nfd or "
                   "nodelist; which commands write which: cumemctl(1)")
        ->check(CLI::Validator(
            [](std::string& value) -> std::string {
                if (parse_format(value)) return {};
                return value + " not in {table,json,prometheus,line,html,junit,nfd,nodelist,csv}";
            },
            "{table,json,prometheus,line,html,junit,nfd,nodelist,csv}"));
    app.add_option(
           "--fields", globals.fields,
           "with --format csv (devices, doctor, bandwidth): the fields, separated by commas, as --json names them")
        ->type_name("LIST");
    app.add_option("--libnvml", globals.libnvml,
                   "the NVML library to load (default: $CUMEMCTL_LIBNVML or libnvidia-ml.so.1; optional)")
        ->type_name("PATH");
    app.add_option("--libcuda", globals.libcuda,
                   "the driver library to load (default: $CUMEMCTL_LIBCUDA or libcuda.so.1)")
        ->type_name("PATH");
    app.add_flag("--no-color", globals.no_color, "never colour the table (NO_COLOR does the same)");
    // Global options may come after the subcommand too.
    app.fallthrough();
}

// What a parse that ended before any command ran answers: the help, the version (with --json the one
// JSON document every --json run writes: the envelope, its results the version), or a usage error in
// the format asked for.
int answer_parse_end(const CLI::ParseError& e, CLI::App& app, int argc, char** argv) {
    const OutputFormat asked = argv_format(argc, argv);
    if (dynamic_cast<const CLI::CallForVersion*>(&e) != nullptr && asked == OutputFormat::json) {
        Report report;
        report.command = "version";
        report.set_results(VersionResults(std::string(cumemctl::tool_version()), std::string(cumemctl::git_commit())));
        Globals as_json;
        as_json.output = OutputFormat::json;
        return emit(report, as_json);
    }
    if (dynamic_cast<const CLI::Success*>(&e) != nullptr && !help_for_unknown_command(e, app, argc, argv)) {
        errno = 0;
        const int code = app.exit(e);  // the help or the version, on stdout
        return with_stdout_checked(code, stdout_error());
    }
    Globals as_asked;
    as_asked.output = asked == OutputFormat::csv ? OutputFormat::table : asked;  // a CSV layout is unchecked here
    Report report;
    report.command = app.get_subcommands().empty() ? "" : app.get_subcommands().front()->get_name();
    report.add_error(usage_problem(e, app, argc, argv));
    return emit(report, as_asked);
}

// Builds the CLI, parses, runs the chosen command and renders its report; returns the exit code.
int run(int argc, char** argv) {
    CLI::App app{"cumemctl: what a node's CUDA memory system can do, and provisioning what it lacks"};
    Globals globals;
    add_global_options(app, globals);
    Runner runner;
    for (const CommandEntry& c : command_table()) c.reg(app, globals, runner);
    add_help_footers(app);
    if (argc == 1) {
        // A bare `cumemctl`: where to start, not a usage error.
        errno = 0;
        std::cout << short_usage();
        return with_stdout_checked(0, stdout_error());
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return answer_parse_end(e, app, argc, argv);
    }
    cumemctl::mark_phase("parse");
    globals.output = output_format(globals.json, globals.format);
    const std::string command = app.get_subcommands().front()->get_name();
    set_running_command(command_named(command));
    if (auto refused = check_format(command, globals)) {
        Globals as_table = globals;
        if (globals.output != OutputFormat::json) as_table.output = OutputFormat::table;
        return emit(*refused, as_table);
    }
    Report report = runner();
    cumemctl::mark_phase("command");
    const int code = emit(report, globals);
    cumemctl::mark_phase("render");
    if (report.delivery.end_without_unwinding || cumemctl::calls_abandoned()) {
        // Threads still wait in a driver or PMIx call that may never return: no destructor or library
        // finaliser may run under them.
        std::cout.flush();
        std::cerr.flush();
        std::fflush(nullptr);
        std::_Exit(code);
    }
    return code;
}

}  // namespace

// The one catch: a stop request (SIGINT, SIGTERM) that escapes a command exits 130 or 143; anything
// else is an internal error (exit 1), never a crash.
int main(int argc, char** argv) {
    cumemctl::mark_phase("main (exec, loader, static initialisers)");
    cumemctl::install_interrupt_handler();
    try {
        return run(argc, argv);
    } catch (const cumemctl::Interrupted& e) {
        std::cerr << "cumemctl: error: " << e.what() << '\n';
        return static_cast<int>(e.exit_code());
    } catch (const std::exception& e) {
        std::cerr << "cumemctl: error: internal error: " << e.what() << '\n';
        return static_cast<int>(ExitCode::failed);
    }
}
