// The one table of cumemctl's commands: each command's registrar and what it does. The frame gives a
// command the contracts that follow from what it declares here (command.hpp, held_errors.hpp,
// shared_gpu.hpp), so that a new command cannot forget them; tests/cli/frame_test.py walks the table.
#pragma once

#include <span>

#include "base/setting.hpp"
#include "command.hpp"

namespace cumemctl::cmd {

// What a command does, which decides what the frame gives it.
enum class Does : unsigned {
    nothing = 0,
    gpu_memory = 1U << 0,  // makes contexts or device memory: its failures are judged for other processes
    measures = 1U << 1,    // measures the GPU: names each process that shared the GPU while it ran
    works_long = 1U << 2,  // may run for seconds: honours SIGINT and SIGTERM within a second
};
constexpr Does operator|(Does a, Does b) {
    return static_cast<Does>(static_cast<unsigned>(a) | static_cast<unsigned>(b));
}

// The formats a command writes besides the table and JSON (its results draw them: report/results.hpp);
// --format asks for one of them only of the commands that write it.
enum class Writes : unsigned {
    table_json = 0,
    prometheus = 1U << 0,  // Results::metrics
    line = 1U << 1,        // Results::line, a drain reason
    html = 1U << 2,        // a page of its own (render/html_renderer.hpp)
    junit_nfd = 1U << 3,   // doctor's: JUnit XML and node-feature-discovery labels (doctor/renderers.hpp)
    nodelist = 1U << 4,    // Results::nodelist, a Slurm host list
};
constexpr Writes operator|(Writes a, Writes b) {
    return static_cast<Writes>(static_cast<unsigned>(a) | static_cast<unsigned>(b));
}

// One row: the command, its registrar, what it does, and the formats it writes.
struct CommandEntry {
    Command command;
    Registrar reg;
    Does does;
    Writes writes = Writes::table_json;
};

// Every command, in the order `--help` shows them.
std::span<const CommandEntry> command_table();

// Whether the running command (set_running_command) declares `what`; false before one runs.
bool running_does(Does what);

// Whether `entry` writes `format`: table, JSON and CSV (csv_fields.hpp checks its layout) always, the
// others as its row says.
bool writes(const CommandEntry& entry, OutputFormat format);

}  // namespace cumemctl::cmd
