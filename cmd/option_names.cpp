#include "option_names.hpp"

#include <string_view>

namespace cumemctl::cmd {
namespace {

// A setting and the flag that sets it, on whichever command has the flag; or only on `command`, where
// another command spells a setting of its own the same way (le-bind's --size is the endpoint's size,
// memtest's the bytes to test). `shown` is what a text says where it is more than the flag.
struct OptionName {
    Setting setting;
    std::string_view flag;
    std::string_view command = {};
    std::string_view shown = {};
};

constexpr OptionName kOptionNames[] = {
    {Setting::libcuda, "--libcuda"},
    {Setting::libnvml, "--libnvml"},
    {Setting::libpmix, "--libpmix"},
    {Setting::location, "--location"},
    {Setting::quick, "--quick"},
    {Setting::rank, "--rank"},
    {Setting::ranks, "--ranks"},
    {Setting::rendezvous, "--rendezvous"},
    {Setting::rendezvous_dir, "--dir"},
    {Setting::pool_max_size, "--max-size"},
    {Setting::access, "--access"},
    {Setting::endpoint_size, "--size", "le-bind"},
    {Setting::endpoint_offset, "--offset"},
    {Setting::mem_offset, "--mem-offset"},
    {Setting::bind_size, "--bind-size"},
    {Setting::handle_type, "--handle-type", "le-bind"},
    {Setting::counted_ops, "--counted-ops"},
    {Setting::by_address, "--by-address"},
    {Setting::limits_only, "--limits-only"},
    {Setting::construction_timeout, "--timeout", "le-bind"},
    {Setting::endpoint_devices, "--devices", "le-bind", "--device N or --devices LIST"},
    {Setting::proc_devices, "--proc-devices"},
    {Setting::params_file, "--params"},
    {Setting::dev_root, "--dev-root"},
    {Setting::channel_owner, "--owner"},
    {Setting::channel_mode, "--mode"},
    {Setting::replace_nodes, "--force", "imex-setup"},
    {Setting::check_only, "--check"},
    {Setting::dry_run, "--dry-run"},
    {Setting::round_up, "--round-up"},
    {Setting::keep, "--keep", "trim"},
    {Setting::exercise, "--exercise"},
    {Setting::test_size, "--size", "memtest"},
    {Setting::chunk, "--chunk"},
    {Setting::start_anyway, "--force", "memtest"},
    {Setting::bandwidth_warn, "--bandwidth-warn"},
    {Setting::bandwidth_fail, "--bandwidth-fail"},
};

bool has_option(const CLI::App& app, std::string_view flag) {
    return app.get_option_no_throw(std::string(flag)) != nullptr;
}

}  // namespace

std::map<Setting, std::string> option_names(const CLI::App& root, const CLI::App& command) {
    std::map<Setting, std::string> names;
    for (const OptionName& o : kOptionNames) {
        if (!o.command.empty() && o.command != command.get_name()) continue;
        if (!has_option(command, o.flag) && !has_option(root, o.flag)) continue;
        names.emplace(o.setting, std::string(o.shown.empty() ? o.flag : o.shown));
    }
    return names;
}

}  // namespace cumemctl::cmd
