// The registrar of every subcommand; main.cpp lists them in the order `--help` shows them.
#pragma once

#include "command.hpp"

namespace cumemctl::cmd {

void register_devices(CLI::App& root, const Globals& globals, Runner& runner);
void register_imex_setup(CLI::App& root, const Globals& globals, Runner& runner);
void register_le_bind(CLI::App& root, const Globals& globals, Runner& runner);

}  // namespace cumemctl::cmd
