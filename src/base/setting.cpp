#include "base/setting.hpp"

#include <cstddef>
#include <iterator>
#include <utility>

namespace cumemctl {
namespace {

// Each setting in the core's own words, in the order of the enum.
constexpr std::pair<Setting, std::string_view> kSettingWords[] = {
    {Setting::libcuda, "the driver library path"},
    {Setting::libnvml, "the NVML library path"},
    {Setting::libpmix, "the PMIx library path"},
    {Setting::location, "location"},
    {Setting::quick, "a quick run"},
    {Setting::rank, "the rank"},
    {Setting::ranks, "the rank count"},
    {Setting::rendezvous, "the rendezvous"},
    {Setting::rendezvous_dir, "the rendezvous folder"},
    {Setting::pool_max_size, "maximum size"},
    {Setting::access, "the devices given access"},
    {Setting::endpoint_size, "endpoint size"},
    {Setting::endpoint_offset, "endpoint offset"},
    {Setting::mem_offset, "memory offset"},
    {Setting::bind_size, "bind size"},
    {Setting::handle_type, "handle type"},
    {Setting::counted_ops, "counted operations"},
    {Setting::by_address, "binding by address"},
    {Setting::limits_only, "a limits-only run"},
    {Setting::construction_timeout, "construction timeout"},
    {Setting::endpoint_devices, "an owner device or a team"},
    {Setting::proc_devices, "the devices path"},
    {Setting::params_file, "the params path"},
    {Setting::dev_root, "the device root"},
    {Setting::channel_owner, "the channels' owner"},
    {Setting::channel_mode, "the channels' mode"},
    {Setting::replace_nodes, "a forced run"},
    {Setting::check_only, "a check-only run"},
    {Setting::dry_run, "a dry run"},
    {Setting::round_up, "rounding up to the granularity"},
    {Setting::keep, "the size to keep"},
    {Setting::exercise, "exercise"},
    {Setting::test_size, "the size to test"},
    {Setting::chunk, "the chunk size"},
    {Setting::start_anyway, "a forced start"},
    {Setting::bandwidth_warn, "the ratio below which a bandwidth warns"},
    {Setting::bandwidth_fail, "the ratio below which a bandwidth fails"},
    {Setting::json, "JSON output"},
    {Setting::device, "the device"},
    {Setting::expect_gpus, "the GPU count expected"},
    {Setting::expect_driver, "the driver version expected"},
    {Setting::expect_idle, "an idle GPU expected"},
    {Setting::list_checks, "the list of checks"},
    {Setting::channel, "the channel"},
    {Setting::verify, "a verified run"},
    {Setting::map, "mapping"},
};

// Each command's name, in the order of the enum.
constexpr std::pair<Command, std::string_view> kCommandNames[] = {
    {Command::doctor, "doctor"},
    {Command::devices, "devices"},
    {Command::imex_setup, "imex-setup"},
    {Command::le_bind, "le-bind"},
    {Command::granularity, "granularity"},
    {Command::create, "create"},
    {Command::pool_stats, "pool-stats"},
    {Command::trim, "trim"},
    {Command::fleet, "fleet"},
    {Command::fabric_matrix, "fabric-matrix"},
    {Command::memtest, "memtest"},
    {Command::bandwidth, "bandwidth"},
    {Command::completion, "completion"},
    {Command::importer, "__importer"},
    {Command::imex_verify, "__imex-verify"},
    {Command::matrix_rank, "__matrix-rank"},
};

// A table names every value of its enum once, at its own place: a value added to the enum and not to the
// table stops the build.
template <typename Enum, std::size_t N>
constexpr bool in_enum_order(const std::pair<Enum, std::string_view> (&table)[N]) {
    for (std::size_t i = 0; i < N; ++i) {
        if (table[i].first != static_cast<Enum>(i)) return false;
    }
    return N == static_cast<std::size_t>(Enum::last) + 1;
}
static_assert(in_enum_order(kSettingWords), "kSettingWords lists every Setting in the enum's order");
static_assert(in_enum_order(kCommandNames), "kCommandNames lists every Command in the enum's order");

}  // namespace

std::string_view setting_words(Setting setting) {
    const auto i = static_cast<std::size_t>(setting);
    return i < std::size(kSettingWords) ? kSettingWords[i].second : "a setting";
}

std::string_view command_name(Command command) {
    const auto i = static_cast<std::size_t>(command);
    return i < std::size(kCommandNames) ? kCommandNames[i].second : "a command";
}

std::string command_line(Command command, std::initializer_list<Argument> arguments) {
    std::string line(command_name(command));
    for (const Argument& a : arguments) {
        line += ' ';
        line += command_flag(command, a.setting);
        if (!a.value.empty()) {
            line += ' ';
            line += a.value;
        }
    }
    return line;
}

}  // namespace cumemctl
