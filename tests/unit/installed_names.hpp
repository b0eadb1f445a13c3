// A command's flags installed for the settings that core texts name, for one test, and the core's words
// again when it ends (install_setting_names replaces the whole map, so nothing leaks into other tests).
#pragma once

#include <map>
#include <string>
#include <utility>

#include "base/setting.hpp"

namespace testing_settings {

// Installs `names` (none: the core's words) while it lives.
class InstalledNames {
public:
    explicit InstalledNames(std::map<cumemctl::Setting, std::string> names = {}) {
        cumemctl::install_setting_names(std::move(names));
    }
    ~InstalledNames() { cumemctl::install_setting_names({}); }
    InstalledNames(const InstalledNames&) = delete;
    InstalledNames& operator=(const InstalledNames&) = delete;
};

}  // namespace testing_settings
