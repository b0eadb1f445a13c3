// A command made the running one for one test (its flags name the settings of the core's texts), and
// none again when it ends, so that nothing leaks into other tests.
#pragma once

#include <optional>

#include "base/setting.hpp"
#include "setting_flags.hpp"

namespace testing_settings {

// Makes `command` (none: the core's words) the running command while it lives.
class RunningCommand {
public:
    explicit RunningCommand(std::optional<cumemctl::Command> command = std::nullopt) {
        cumemctl::cmd::set_running_command(command);
    }
    ~RunningCommand() { cumemctl::cmd::set_running_command(std::nullopt); }
    RunningCommand(const RunningCommand&) = delete;
    RunningCommand& operator=(const RunningCommand&) = delete;
};

}  // namespace testing_settings
