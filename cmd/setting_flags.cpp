#include "setting_flags.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace cumemctl::cmd {
namespace {

// A set of commands, one bit each.
using Commands = std::uint32_t;
static_assert(static_cast<std::size_t>(Command::last) < 32, "a Commands bit for every command");

constexpr Commands bit(Command c) {
    return Commands{1} << static_cast<unsigned>(c);
}

constexpr Commands on(std::initializer_list<Command> commands) {
    Commands set = 0;
    for (Command c : commands) set |= bit(c);
    return set;
}

constexpr Commands kEvery = ~Commands{0};  // a global option

// A setting, the flag that sets it, and the commands that have that flag for it. `spelled_alike`: another
// command spells a setting of its own the same way (le-bind's --size is the endpoint's size, memtest's
// the bytes to test). `shown` is what a text says where it is more than the flag.
struct Row {
    Setting setting;
    std::string_view flag;
    Commands commands;
    bool spelled_alike = false;
    std::string_view shown = {};
};

using enum Command;

constexpr Row kRows[] = {
    {Setting::libcuda, "--libcuda", kEvery},
    {Setting::libnvml, "--libnvml", kEvery},
    {Setting::json, "--json", kEvery},
    {Setting::libpmix, "--libpmix", on({fabric_matrix})},
    {Setting::location, "--location", on({le_bind, granularity, create, pool_stats, trim})},
    {Setting::quick, "--quick", on({doctor})},
    {Setting::rank, "--rank", on({fabric_matrix, matrix_rank})},
    {Setting::ranks, "--ranks", on({fabric_matrix, matrix_rank})},
    {Setting::rendezvous, "--rendezvous", on({fabric_matrix})},
    {Setting::rendezvous_dir, "--dir", on({fabric_matrix, matrix_rank})},
    {Setting::pool_max_size, "--max-size", on({create, pool_stats, trim})},
    {Setting::access, "--access", on({create})},
    {Setting::endpoint_size, "--size", on({le_bind}), true},
    {Setting::endpoint_offset, "--offset", on({le_bind})},
    {Setting::mem_offset, "--mem-offset", on({le_bind})},
    {Setting::bind_size, "--bind-size", on({le_bind})},
    {Setting::handle_type, "--handle-type", on({le_bind}), true},
    {Setting::counted_ops, "--counted-ops", on({le_bind})},
    {Setting::by_address, "--by-address", on({le_bind})},
    {Setting::limits_only, "--limits-only", on({le_bind})},
    {Setting::construction_timeout, "--timeout", on({le_bind}), true},
    {Setting::endpoint_devices, "--devices", on({le_bind}), false, "--device N or --devices LIST"},
    {Setting::proc_devices, "--proc-devices", on({imex_setup})},
    {Setting::params_file, "--params", on({imex_setup})},
    {Setting::dev_root, "--dev-root", on({imex_setup})},
    {Setting::channel_owner, "--owner", on({imex_setup})},
    {Setting::channel_mode, "--mode", on({imex_setup})},
    {Setting::replace_nodes, "--force", on({imex_setup}), true},
    {Setting::check_only, "--check", on({imex_setup})},
    {Setting::dry_run, "--dry-run", on({imex_setup})},
    {Setting::round_up, "--round-up", on({create})},
    {Setting::keep, "--keep", on({trim}), true},
    {Setting::exercise, "--exercise", on({pool_stats, trim})},
    {Setting::test_size, "--size", on({memtest}), true},
    {Setting::chunk, "--chunk", on({memtest})},
    {Setting::start_anyway, "--force", on({memtest}), true},
    {Setting::bandwidth_warn, "--bandwidth-warn", on({doctor})},
    {Setting::bandwidth_fail, "--bandwidth-fail", on({doctor})},
    {Setting::device, "--device",
     on({doctor, devices, imex_setup, le_bind, granularity, create, pool_stats, trim, fabric_matrix, memtest, bandwidth,
         importer, imex_verify, matrix_rank})},
    {Setting::expect_gpus, "--expect-gpus", on({doctor})},
    {Setting::expect_driver, "--expect-driver", on({doctor})},
    {Setting::expect_idle, "--expect-idle", on({doctor})},
    {Setting::list_checks, "--list-checks", on({doctor})},
    {Setting::channel, "--channel", on({imex_setup})},
    {Setting::verify, "--verify", on({imex_setup, create})},
    {Setting::map, "--map", on({create})},
};

// The running command, set once before the run's threads start; none until then.
std::atomic<int> running{-1};

}  // namespace

std::optional<Command> command_named(std::string_view name) {
    for (int i = 0; i <= static_cast<int>(Command::last); ++i) {
        if (command_name(static_cast<Command>(i)) == name) return static_cast<Command>(i);
    }
    return std::nullopt;
}

void set_running_command(std::optional<Command> command) {
    running = command ? static_cast<int>(*command) : -1;
}

std::optional<Command> running_command() {
    const int command = running;
    return command < 0 ? std::nullopt : std::optional<Command>(static_cast<Command>(command));
}

std::vector<SettingFlag> setting_flags() {
    std::vector<SettingFlag> flags;
    for (const Row& r : kRows) {
        SettingFlag f{r.setting, r.flag, {}, r.spelled_alike};
        for (int i = 0; r.commands != kEvery && i <= static_cast<int>(Command::last); ++i) {
            if ((r.commands & bit(static_cast<Command>(i))) != 0) f.commands.push_back(static_cast<Command>(i));
        }
        flags.push_back(f);
    }
    return flags;
}

}  // namespace cumemctl::cmd

namespace cumemctl {

std::string command_flag(Command command, Setting setting) {
    for (const cmd::Row& r : cmd::kRows) {
        if (r.setting == setting && (r.commands & cmd::bit(command)) != 0)
            return std::string(r.shown.empty() ? r.flag : r.shown);
    }
    return std::string(setting_words(setting));
}

std::string setting_name(Setting setting) {
    const int command = cmd::running;
    return command < 0 ? std::string(setting_words(setting)) : command_flag(static_cast<Command>(command), setting);
}

}  // namespace cumemctl
