#include "option_names.hpp"

#include <string_view>

namespace cumemctl::cmd {
namespace {

// A setting and the flag that sets it, on whichever command has it.
struct OptionName {
    Setting setting;
    std::string_view flag;
};

constexpr OptionName kOptionNames[] = {
    {Setting::libcuda, "--libcuda"},    {Setting::libnvml, "--libnvml"},
    {Setting::libpmix, "--libpmix"},    {Setting::location, "--location"},
    {Setting::quick, "--quick"},        {Setting::rank, "--rank"},
    {Setting::ranks, "--ranks"},        {Setting::rendezvous, "--rendezvous"},
    {Setting::rendezvous_dir, "--dir"}, {Setting::pool_max_size, "--max-size"},
    {Setting::access, "--access"},
};

bool has_option(const CLI::App& app, std::string_view flag) {
    return app.get_option_no_throw(std::string(flag)) != nullptr;
}

}  // namespace

std::map<Setting, std::string> option_names(const CLI::App& root, const CLI::App& command) {
    std::map<Setting, std::string> names;
    for (const OptionName& o : kOptionNames) {
        if (has_option(command, o.flag) || has_option(root, o.flag)) names.emplace(o.setting, std::string(o.flag));
    }
    return names;
}

}  // namespace cumemctl::cmd
