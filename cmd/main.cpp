// cumemctl: builds the CLI from the list of commands, parses, runs one, renders its report.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string_view>

#include "command.hpp"
#include "commands.hpp"
#include "report/renderer.hpp"

namespace {

using cumemctl::ExitCode;
using cumemctl::Report;
using namespace cumemctl::cmd;

constexpr Registrar kCommands[] = {
    register_devices,
    register_imex_setup,
    register_le_bind,
};

// Whether the command line asked for JSON, read without the parser (for errors the parser raised).
bool argv_wants_json(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--json" || a == "--format=json") return true;
        if (a == "--format" && i + 1 < argc && std::string_view(argv[i + 1]) == "json") return true;
    }
    return false;
}

bool use_colour(const Globals& g) {
    if (g.no_color) return false;
    const char* no_color = std::getenv("NO_COLOR");
    if (no_color != nullptr && *no_color != '\0') return false;
    return isatty(STDOUT_FILENO) != 0;
}

int emit(const Report& report, const Globals& globals) {
    const bool json = globals.json || globals.format == "json";
    if (json) {
        cumemctl::JsonRenderer{}.render(report, std::cout);
    } else {
        cumemctl::TableRenderer{use_colour(globals)}.render(report, std::cout);
    }
    std::cout.flush();
    cumemctl::write_problems(report, std::cerr);
    return static_cast<int>(report.exit_code);
}

// Builds the CLI, parses, runs the chosen command and renders its report; returns the exit code.
int run(int argc, char** argv) {
    CLI::App app{"cumemctl: what a node's CUDA memory system can do, and provisioning what it lacks"};
    app.name("cumemctl");
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string("cumemctl ") + CUMEMCTL_VERSION + " (" + CUMEMCTL_GIT_COMMIT + ")");
    Globals globals;
    app.add_flag("--json", globals.json, "write one JSON document to stdout")->configurable(false);
    app.add_option("--format", globals.format, "output format: table or json")
        ->check(CLI::IsMember({"table", "json"}));
    app.add_option("--libcuda", globals.libcuda, "the driver library to load (default: $CUMEMCTL_LIBCUDA or libcuda.so.1)");
    app.add_flag("--no-color", globals.no_color, "never colour the table (NO_COLOR does the same)");
    // Global options may come after the subcommand too.
    app.fallthrough();

    Runner runner;
    for (Registrar reg : kCommands) reg(app, globals, runner);

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        Report report;
        report.command = app.get_subcommands().empty() ? "" : app.get_subcommands().front()->get_name();
        cumemctl::Problem p;
        p.exit_code = ExitCode::usage;
        p.message = e.what();
        p.remedy = "run 'cumemctl --help' or 'cumemctl COMMAND --help' for the options";
        report.add_error(std::move(p));
        Globals as_asked;
        as_asked.json = argv_wants_json(argc, argv);
        return emit(report, as_asked);
    }
    return emit(runner(), globals);
}

}  // namespace

// The one catch: anything that escapes a command is an internal error (exit 1), never a crash.
int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "cumemctl: error: internal error: " << e.what() << '\n';
        return static_cast<int>(ExitCode::failed);
    }
}
