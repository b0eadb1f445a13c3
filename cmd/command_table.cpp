#include "command_table.hpp"

#include "commands.hpp"
#include "setting_flags.hpp"

namespace cumemctl::cmd {
namespace {

using enum Does;

// clang-format off
constexpr CommandEntry kCommands[] = {
    {Command::doctor,        register_doctor,        gpu_memory | measures | works_long},
    {Command::devices,       register_devices,       nothing},
    {Command::imex_setup,    register_imex_setup,    works_long},
    {Command::le_bind,       register_le_bind,       gpu_memory},
    {Command::granularity,   register_granularity,   nothing},
    {Command::create,        register_create,        gpu_memory},
    {Command::importer,      register_importer,      gpu_memory},
    {Command::pool_stats,    register_pool_stats,    gpu_memory},
    {Command::trim,          register_trim,          gpu_memory},
    {Command::fleet,         register_fleet,         works_long},
    {Command::fabric_matrix, register_fabric_matrix, gpu_memory | measures | works_long},
    {Command::matrix_rank,   register_matrix_rank,   gpu_memory | works_long},
    {Command::memtest,       register_memtest,       gpu_memory | measures | works_long},
    {Command::bandwidth,     register_bandwidth,     gpu_memory | measures | works_long},
    {Command::completion,    register_completion,    nothing},
    {Command::imex_verify,   register_imex_verify,   gpu_memory},
};
// clang-format on

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

}  // namespace cumemctl::cmd
