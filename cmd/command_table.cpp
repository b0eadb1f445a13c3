#include "command_table.hpp"

#include "setting_flags.hpp"

namespace cumemctl::cmd {

// Each command's registrar, defined in its cmd/NAME.cpp: it adds the command to `root` and, when chosen,
// sets `runner`.
void register_doctor(CLI::App& root, const Globals& globals, Runner& runner);
void register_devices(CLI::App& root, const Globals& globals, Runner& runner);
void register_imex_setup(CLI::App& root, const Globals& globals, Runner& runner);
void register_le_bind(CLI::App& root, const Globals& globals, Runner& runner);
void register_granularity(CLI::App& root, const Globals& globals, Runner& runner);
void register_create(CLI::App& root, const Globals& globals, Runner& runner);
// The hidden second process of the IPC checks (create --import-check, create --pool --ipc-check, doctor).
void register_importer(CLI::App& root, const Globals& globals, Runner& runner);
void register_pool_stats(CLI::App& root, const Globals& globals, Runner& runner);
void register_trim(CLI::App& root, const Globals& globals, Runner& runner);
void register_fleet(CLI::App& root, const Globals& globals, Runner& runner);
// fabric-matrix, and the hidden rank process of its --local mode.
void register_fabric_matrix(CLI::App& root, const Globals& globals, Runner& runner);
void register_matrix_rank(CLI::App& root, const Globals& globals, Runner& runner);
void register_memtest(CLI::App& root, const Globals& globals, Runner& runner);
void register_bandwidth(CLI::App& root, const Globals& globals, Runner& runner);
void register_completion(CLI::App& root, const Globals& globals, Runner& runner);
// The hidden child of imex-setup --verify.
void register_imex_verify(CLI::App& root, const Globals& globals, Runner& runner);

namespace {

using enum Does;
using W = Writes;

// clang-format off
constexpr CommandEntry kCommands[] = {
    {Command::doctor,        register_doctor,        gpu_memory | measures | works_long,
                                                     W::prometheus | W::line | W::junit_nfd},
    {Command::devices,       register_devices,       nothing, W::prometheus},
    {Command::imex_setup,    register_imex_setup,    works_long},
    {Command::le_bind,       register_le_bind,       gpu_memory},
    {Command::granularity,   register_granularity,   nothing},
    {Command::create,        register_create,        gpu_memory},
    {Command::importer,      register_importer,      gpu_memory},
    {Command::pool_stats,    register_pool_stats,    gpu_memory, W::prometheus},
    {Command::trim,          register_trim,          gpu_memory},
    {Command::fleet,         register_fleet,         works_long, W::html | W::nodelist},
    {Command::fabric_matrix, register_fabric_matrix, gpu_memory | measures | works_long, W::html},
    {Command::matrix_rank,   register_matrix_rank,   gpu_memory | works_long},
    {Command::memtest,       register_memtest,       gpu_memory | measures | works_long, W::prometheus},
    {Command::bandwidth,     register_bandwidth,     gpu_memory | measures | works_long, W::prometheus},
    {Command::completion,    register_completion,    nothing},
    {Command::imex_verify,   register_imex_verify,   gpu_memory},
};
// clang-format on

// The bit of the row's `writes` that a format needs; table_json for those every command writes.
Writes needed(OutputFormat format) {
    switch (format) {
        case OutputFormat::prometheus:
            return Writes::prometheus;
        case OutputFormat::line:
            return Writes::line;
        case OutputFormat::html:
            return Writes::html;
        case OutputFormat::junit:
        case OutputFormat::nfd:
            return Writes::junit_nfd;
        case OutputFormat::nodelist:
            return Writes::nodelist;
        case OutputFormat::table:
        case OutputFormat::json:
        case OutputFormat::csv:
            break;
    }
    return Writes::table_json;
}

}  // namespace

std::span<const CommandEntry> command_table() {
    return kCommands;
}

bool running_does(Does what) {
    const std::optional<Command> running = running_command();
    if (!running) return false;
    for (const CommandEntry& e : kCommands) {
        if (e.command == *running) return (static_cast<unsigned>(e.does) & static_cast<unsigned>(what)) != 0;
    }
    return false;
}

bool writes(const CommandEntry& entry, OutputFormat format) {
    const auto bit = static_cast<unsigned>(needed(format));
    return bit == 0 || (static_cast<unsigned>(entry.writes) & bit) != 0;
}

}  // namespace cumemctl::cmd
