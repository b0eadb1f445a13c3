#include "base/setting.hpp"

#include <utility>

namespace cumemctl {
namespace {

// The flags installed for the command that runs; written once before the run, read by every thread after.
std::map<Setting, std::string>& installed() {
    static std::map<Setting, std::string> names;
    return names;
}

}  // namespace

std::string_view setting_words(Setting setting) {
    switch (setting) {
        case Setting::libcuda:
            return "the driver library path";
        case Setting::libnvml:
            return "the NVML library path";
        case Setting::libpmix:
            return "the PMIx library path";
        case Setting::location:
            return "location";
        case Setting::quick:
            return "a quick run";
        case Setting::rank:
            return "the rank";
        case Setting::ranks:
            return "the rank count";
        case Setting::rendezvous:
            return "the rendezvous";
        case Setting::rendezvous_dir:
            return "the rendezvous folder";
        case Setting::pool_max_size:
            return "maximum size";
        case Setting::access:
            return "the devices given access";
        case Setting::endpoint_size:
            return "endpoint size";
        case Setting::endpoint_offset:
            return "endpoint offset";
        case Setting::mem_offset:
            return "memory offset";
        case Setting::bind_size:
            return "bind size";
        case Setting::handle_type:
            return "handle type";
        case Setting::counted_ops:
            return "counted operations";
        case Setting::by_address:
            return "binding by address";
        case Setting::limits_only:
            return "a limits-only run";
        case Setting::construction_timeout:
            return "construction timeout";
        case Setting::endpoint_devices:
            return "an owner device or a team";
        case Setting::proc_devices:
            return "the devices path";
        case Setting::params_file:
            return "the params path";
        case Setting::dev_root:
            return "the device root";
        case Setting::channel_owner:
            return "the channels' owner";
        case Setting::channel_mode:
            return "the channels' mode";
        case Setting::replace_nodes:
            return "a forced run";
        case Setting::check_only:
            return "a check-only run";
        case Setting::dry_run:
            return "a dry run";
        case Setting::round_up:
            return "rounding up to the granularity";
        case Setting::keep:
            return "the size to keep";
        case Setting::exercise:
            return "exercise";
        case Setting::test_size:
            return "the size to test";
        case Setting::chunk:
            return "the chunk size";
        case Setting::start_anyway:
            return "a forced start";
    }
    return "a setting";
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
