// The one table from a setting the core names (base/setting.hpp) to the flag a user types, which defines
// the core's command_flag and setting_name: every text of the core that asks for a change names the
// running command's own flag where it has one, and a command line it shows is spelled as typed.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "base/setting.hpp"

namespace cumemctl::cmd {

// The command whose name is `name` ("imex-setup"), or none.
std::optional<Command> command_named(std::string_view name);

// Makes `command` the one whose flags setting_name gives (none: the core's words): called once, before the
// run and its threads start.
void set_running_command(std::optional<Command> command);
// The command set_running_command made the running one, or none.
std::optional<Command> running_command();

// A row of the table, for the test that holds it against each command's --help.
struct SettingFlag {
    Setting setting;
    std::string_view flag;          // as typed: "--size"
    std::vector<Command> commands;  // the commands whose flag this is (empty: every command, a global option)
    bool spelled_alike = false;     // another command spells a setting of its own with this flag
};
std::vector<SettingFlag> setting_flags();

}  // namespace cumemctl::cmd
