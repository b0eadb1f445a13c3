// The registrar of every subcommand; main.cpp lists them in the order `--help` shows them.
#pragma once

#include "command.hpp"

namespace cumemctl::cmd {

void register_doctor(CLI::App& root, const Globals& globals, Runner& runner);
void register_devices(CLI::App& root, const Globals& globals, Runner& runner);
void register_fleet(CLI::App& root, const Globals& globals, Runner& runner);
void register_completion(CLI::App& root, const Globals& globals, Runner& runner);

}  // namespace cumemctl::cmd
