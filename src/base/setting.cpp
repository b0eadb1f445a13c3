#include "base/setting.hpp"

#include <cstddef>
#include <iterator>
#include <utility>

namespace cumemctl {
namespace {

// The flags installed for the command that runs; written once before the run, read by every thread after.
std::map<Setting, std::string>& installed() {
    static std::map<Setting, std::string> names;
    return names;
}

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
};

// The table names every setting once, at its own place: a setting added to the enum and not here stops
// the build.
constexpr bool in_enum_order() {
    for (std::size_t i = 0; i < std::size(kSettingWords); ++i) {
        if (kSettingWords[i].first != static_cast<Setting>(i)) return false;
    }
    return std::size(kSettingWords) == static_cast<std::size_t>(Setting::last) + 1;
}
static_assert(in_enum_order(), "kSettingWords lists every Setting in the enum's order");

}  // namespace

std::string_view setting_words(Setting setting) {
    const auto i = static_cast<std::size_t>(setting);
    return i < std::size(kSettingWords) ? kSettingWords[i].second : "a setting";
}

std::string setting_name(Setting setting) {
    const auto& names = installed();
    const auto it = names.find(setting);
    return it != names.end() ? it->second : std::string(setting_words(setting));
}

void install_setting_names(std::map<Setting, std::string> names) {
    installed() = std::move(names);
}

}  // namespace cumemctl
