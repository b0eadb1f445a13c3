// What every subcommand shares: the global options, the registration signature, and the one place
// that turns a command body into a report (driver loaded, errors caught).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>

#include <CLI/CLI.hpp>

#include "base/interrupt.hpp"
#include "cuda/driver.hpp"
#include "nvml/nvml.hpp"
#include "output_format.hpp"
#include "progress_line.hpp"
#include "report/report.hpp"

namespace cumemctl::cmd {

// Options that every subcommand takes.
struct Globals {
    bool json = false;                          // --json: one JSON document on stdout
    std::string format;                         // --format as typed (json is the same as --json; csv carries its flags)
    OutputFormat output = OutputFormat::table;  // what --json and --format ask for, set once parsed
    std::string libcuda;                        // --libcuda PATH
    std::string libnvml;                        // --libnvml PATH
    bool no_color = false;                      // --no-color
    std::string fields;                         // --fields LIST (with --format csv)
};

// The function main() runs once parsing has picked a subcommand.
using Runner = std::function<Report()>;

// A subcommand adds itself to `root` and, when chosen, sets `runner` to a function that runs it.
using Registrar = void (*)(CLI::App& root, const Globals& globals, Runner& runner);

// Loads the driver that the globals name (--libcuda, CUMEMCTL_LIBCUDA, libcuda.so.1).
Driver open_driver(const Globals& globals);

// Loads NVML as the globals name it (--libnvml, CUMEMCTL_LIBNVML, libnvidia-ml.so.1); throws only where
// root would load a library that others can change (a library that cannot be used says why). Commands that use it load
// it on a thread of its own while the driver initialises, so that it adds nothing to their time. `watched`: see
// nvml::Library::load.
nvml::Library open_nvml(const Globals& globals, bool watched = false);

// A warning in `report` when --libnvml named a library that did not load: without it NVML's rows and
// figures vanish, and an explicit path says the operator expected them.
void warn_unloaded_libnvml(Report& report, const Globals& globals, const nvml::LibraryInfo& info);

// NVML's identity for a report's results: {"library", "loaded", "driver_version", "error"}.
nlohmann::json nvml_json(const nvml::LibraryInfo& info);

// The report's error for a run that SIGINT or SIGTERM stopped (exit 130 or 143).
Problem interrupted_problem(const Interrupted& stop);

// Where SIGINT or SIGTERM came before `report` is written and it does not say so already: the report
// with the stop among its errors and its exit code (130, 143), whatever the run ended with (a usage
// error, a failure that no safe point met, success). main's one exit asks this of every report.
std::optional<Report> stopped_report(const Report& report);

// Runs `body` with a fresh report for `command`: catches Error into report errors, Interrupted (SIGINT,
// SIGTERM: the guards have released what was made) into an error with exit 130 or 143, and any other
// exception as an internal failure, so that a report always comes back. A run stopped by SIGINT or
// SIGTERM gets the warnings of the shared-GPU watches that the stop unwound (shared_gpu.hpp).
Report run_guarded(const std::string& command, const std::function<void(Report&)>& body);

// The frame of the hidden subcommands that run as a second process (__importer, __imex-verify,
// __matrix-rank): takes the socket at `socket_fd` (closed when this returns), asks the
// kernel to end this process with its parent, and runs `serve`, which answers over the socket and
// returns the problem that stopped it, if any: the exit code (failed where the problem names none).
// What escapes `serve` (a driver that does not load, a socket that fails) goes through run_guarded.
Report run_second_process(const std::string& command, int socket_fd,
                          const std::function<std::optional<Problem>(int socket)>& serve);

// Whether the running command's progress line is drawn (progress_line.hpp): it works long (command_table:
// Does::works_long), the output is the table and standard error is a terminal.
bool shows_progress(const Globals& globals);

// Runs a command in its two phases. First `options.check()` turns the options as typed into typed
// values (sizes, lists, numbers, device lists), throwing usage errors (exit 2) before anything is
// loaded, so that a usage error is one whatever the driver; then `body(report, checked)` runs. Every
// command runs this way, through run_command when it needs the driver.
template <class Options, class Body>
Report run_checked(const std::string& command, const Options& options, Body&& body) {
    using Checked = std::remove_cvref_t<decltype(options.check())>;
    std::optional<Checked> checked;
    Report early = run_guarded(command, [&](Report&) { checked.emplace(options.check()); });
    if (!checked) return early;
    return run_guarded(command, [&](Report& report) { body(report, *checked); });
}

// run_checked for a command that needs the driver: `body(report, driver, device_count, checked)` runs
// with the driver loaded and initialised; a driver that cannot be loaded is an "unavailable" error
// (exit 3) that names the library that was tried. A long command's progress line lives meanwhile.
template <class Options, class Body>
Report run_command(const std::string& command, const Globals& globals, const Options& options, Body&& body) {
    return run_checked(command, options, [&](Report& report, auto& checked) {
        const ProgressLine progress(shows_progress(globals), command);
        Driver driver = open_driver(globals);
        report.driver = driver.info();
        const int count = driver.init();
        body(report, driver, count, checked);
    });
}

// The width that tables and --help wrap to: $COLUMNS where it is set (a number from 40), else the
// terminal's; 0 (no wrapping, whole lines for grep) when the output is not a terminal.
std::size_t output_width();

// Adds the --device option (a device list: 0, 0,2, 1-3, all) to a subcommand.
CLI::Option* add_device_option(CLI::App& app, std::string& target, const std::string& default_value = "all");

}  // namespace cumemctl::cmd
