// cumemctl: builds the CLI from the list of commands, parses, runs one, renders its report.
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string_view>

#include <fmt/format.h>

#include "base/interrupt.hpp"
#include "command.hpp"
#include "commands.hpp"
#include "csv_fields.hpp"
#include "help_text.hpp"
#include "report/csv_renderer.hpp"
#include "report/renderer.hpp"
#include "usage_words.hpp"
#include "util/phase_timing.hpp"
#include "util/version.hpp"

namespace {

using cumemctl::ExitCode;
using cumemctl::Report;
using namespace cumemctl::cmd;

constexpr Registrar kCommands[] = {
    register_doctor,        register_devices,     register_imex_setup, register_le_bind,    register_granularity,
    register_create,        register_importer,    register_pool_stats, register_trim,       register_fleet,
    register_fabric_matrix, register_matrix_rank, register_memtest,    register_completion, register_imex_verify,
};

// The commands that fill Report::metrics and so answer --format prometheus; any other refuses it.
constexpr std::string_view kPrometheusCommands[] = {"doctor", "devices", "pool-stats", "memtest"};
// The commands whose report makes a page of its own, and so answer --format html.
constexpr std::string_view kHtmlCommands[] = {"fabric-matrix", "fleet"};

// The commands that fill Report::line and so answer --format line (a one-line summary).
constexpr std::string_view kLineCommands[] = {"doctor"};
// The commands whose Report::line is a Slurm host list, and so answer --format nodelist (fleet: the
// failing nodes, for scontrol to drain).
constexpr std::string_view kNodelistCommands[] = {"fleet"};

// The output format the command line asked for, read without the parser (for errors the parser
// raised): "json", "prometheus" or "table".
std::string argv_format(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--json") return "json";
        if (a.rfind("--format=", 0) == 0) return std::string(a.substr(9));
        if (a == "--format" && i + 1 < argc) return argv[i + 1];
    }
    return "table";
}

bool use_colour(const Globals& g) {
    if (g.no_color) return false;
    const char* no_color = std::getenv("NO_COLOR");
    if (no_color != nullptr && *no_color != '\0') return false;
    return isatty(STDOUT_FILENO) != 0;
}

// The width tables wrap to: $COLUMNS where it is set (a number from 40), else the terminal's; 0 (no
// wrapping, whole lines for grep) when the output is not a terminal.
std::size_t output_width() {
    if (const char* columns = std::getenv("COLUMNS"); columns != nullptr && *columns != '\0') {
        char* end = nullptr;
        const long n = std::strtol(columns, &end, 10);
        if (*end == '\0' && n >= 40 && n <= 10000) return static_cast<std::size_t>(n);
    }
    winsize ws{};
    if (isatty(STDOUT_FILENO) == 0) return 0;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40) return ws.ws_col;
    return 80;
}

int emit(const Report& report, const Globals& globals) {
    if (report.stdout_quiet) {
        // nothing on standard output
    } else if (globals.json || globals.format == "json") {
        cumemctl::JsonRenderer{}.render(report, std::cout);
    } else if (globals.format == "prometheus") {
        cumemctl::PrometheusRenderer{}.render(report, std::cout);
    } else if (globals.format == "html") {
        cumemctl::HtmlRenderer{}.render(report, std::cout);
    } else if (globals.format == "line") {
        cumemctl::LineRenderer{}.render(report, std::cout);
    } else if (is_csv_format(globals.format)) {
        cumemctl::CsvRenderer{csv_layout(report.command, globals.format, globals.fields)}.render(report, std::cout);
    } else if (globals.format == "nodelist") {
        if (!report.line.empty()) std::cout << report.line << '\n';  // nothing when no node fails
    } else {
        cumemctl::TableRenderer{use_colour(globals), output_width()}.render(report, std::cout);
    }
    std::cout.flush();
    cumemctl::write_problems(report, std::cerr);
    return static_cast<int>(report.exit_code);
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
    if (globals.json && !globals.format.empty() && globals.format != "json") {
        return usage_report(command, "--json and --format " + globals.format + " ask for two formats",
                            "give one of --json or --format table|json|prometheus|line|html|nodelist");
    }
    const bool prometheus_ok = std::find(std::begin(kPrometheusCommands), std::end(kPrometheusCommands), command) !=
                               std::end(kPrometheusCommands);
    if (globals.format == "prometheus" && !prometheus_ok) {
        return usage_report(command, "'" + command + "' has no Prometheus output",
                            "--format prometheus works with doctor, devices, pool-stats and memtest; use --json here");
    }
    const bool html_ok =
        std::find(std::begin(kHtmlCommands), std::end(kHtmlCommands), command) != std::end(kHtmlCommands);
    if (globals.format == "html" && !html_ok) {
        return usage_report(command, "'" + command + "' has no HTML page",
                            "--format html works with fabric-matrix and fleet; use --json here");
    }
    const bool line_ok =
        std::find(std::begin(kLineCommands), std::end(kLineCommands), command) != std::end(kLineCommands);
    if (globals.format == "line" && !line_ok) {
        return usage_report(command, "'" + command + "' has no one-line summary",
                            "--format line works with doctor; use --json here");
    }
    if (is_csv_format(globals.format)) {
        try {
            csv_layout(command, globals.format, globals.fields);
        } catch (const cumemctl::Error& e) {
            return usage_report(command, e.problem().message, e.problem().remedy);
        }
    } else if (!globals.fields.empty()) {
        return usage_report(command, "--fields goes with --format csv", "add --format csv, or leave --fields out");
    }
    const bool nodelist_ok =
        std::find(std::begin(kNodelistCommands), std::end(kNodelistCommands), command) != std::end(kNodelistCommands);
    if (globals.format == "nodelist" && !nodelist_ok) {
        return usage_report(command, "'" + command + "' has no node list",
                            "--format nodelist works with fleet (its failing nodes); use --json here");
    }
    return std::nullopt;
}

// What bare `cumemctl` prints: the commands an operator starts with, and where the rest is.
std::string short_usage(const std::vector<std::string>& commands) {
    return fmt::format(
        "usage: cumemctl [--json | --format FORMAT] COMMAND [OPTIONS]\n"
        "\n"
        "  cumemctl doctor           check this node's CUDA memory system (exit 1 on a failure)\n"
        "  cumemctl doctor --quick   the checks that need no GPU memory: safe beside jobs\n"
        "  cumemctl devices          each GPU's identity, memory and memory capabilities\n"
        "  cumemctl memtest          test every free byte of each GPU's memory\n"
        "  cumemctl fleet FILE...    summarise many nodes' doctor reports\n"
        "\n"
        "commands: {}\n"
        "'cumemctl --help' says what each does, 'cumemctl COMMAND --help' lists its options, man cumemctl has the "
        "rest.\n",
        fmt::join(commands, ", "));
}

// Builds the CLI, parses, runs the chosen command and renders its report; returns the exit code.
int run(int argc, char** argv) {
    CLI::App app{"cumemctl: what a node's CUDA memory system can do, and provisioning what it lacks"};
    app.name("cumemctl");
    app.require_subcommand(1);
    app.set_version_flag("--version",
                         fmt::format("cumemctl {} (git {})", cumemctl::tool_version(), cumemctl::git_commit()));
    Globals globals;
    app.add_flag("--json", globals.json, "write one JSON document to stdout")->configurable(false);
    app.add_option("--format", globals.format,
                   "output format: table, json, prometheus (doctor, devices, pool-stats, memtest), line (doctor), "
                   "html (fabric-matrix, fleet), nodelist (fleet's failing nodes) or csv[,noheader][,nounits] "
                   "(devices, doctor)")
        ->check(CLI::Validator(
            [](std::string& value) -> std::string {
                static const std::vector<std::string> named{"table", "json", "prometheus", "line", "html", "nodelist"};
                if (is_csv_format(value) || std::find(named.begin(), named.end(), value) != named.end()) return {};
                return value + " not in {table,json,prometheus,line,html,nodelist,csv}";
            },
            "{table,json,prometheus,line,html,nodelist,csv}"));
    app.add_option("--fields", globals.fields,
                   "with --format csv (devices, doctor): the fields, separated by commas, as --json names them")
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

    app.formatter(help_formatter());  // before the commands: each takes its parent's
    Runner runner;
    for (Registrar reg : kCommands) reg(app, globals, runner);
    add_help_footers(app);

    if (argc == 1) {
        // Bare cumemctl: what to type first, not an error.
        std::cout << short_usage(visible_commands(app));
        return 0;
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        Globals as_asked;
        as_asked.format = argv_format(argc, argv);
        const std::string command = app.get_subcommands().empty() ? "" : app.get_subcommands().front()->get_name();
        Report report;
        report.command = command;
        report.add_error(usage_problem(e, app, argc, argv));
        return emit(report, as_asked);
    }
    cumemctl::mark_phase("parse");
    const std::string command = app.get_subcommands().front()->get_name();
    if (auto refused = check_format(command, globals)) {
        Globals as_table = globals;
        if (globals.format == "prometheus" || globals.format == "html" || globals.format == "line" ||
            globals.format == "nodelist" || is_csv_format(globals.format)) {
            as_table.format = "table";
        }
        return emit(*refused, as_table);
    }
    Report report = runner();
    cumemctl::mark_phase("command");
    const int code = emit(report, globals);
    cumemctl::mark_phase("render");
    if (report.end_without_unwinding) {
        // Threads still wait in a driver call that may never return: no destructor may run under them.
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
