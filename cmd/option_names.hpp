// The one table from a setting the core names (base/setting.hpp) to the flag a user types: every text
// of the core that asks for a change names the command's own flag where the command has one.
#pragma once

#include <map>
#include <string>

#include <CLI/CLI.hpp>

#include "base/setting.hpp"

namespace cumemctl::cmd {

// The flags that `command` (or the root's global options) has for the settings of the table, a row
// that belongs to one command only when `command` is that one; the settings it has no flag for are left
// out (their texts keep the core's words).
std::map<Setting, std::string> option_names(const CLI::App& root, const CLI::App& command);

}  // namespace cumemctl::cmd
