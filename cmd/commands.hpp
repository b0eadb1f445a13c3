// The registrar of every subcommand; main.cpp lists them in the order `--help` shows them.
#pragma once

#include "command.hpp"

namespace cumemctl::cmd {

void register_devices(CLI::App& root, const Globals& globals, Runner& runner);
void register_pool_stats(CLI::App& root, const Globals& globals, Runner& runner);
void register_trim(CLI::App& root, const Globals& globals, Runner& runner);
void register_pool_import(CLI::App& root, const Globals& globals, Runner& runner);
void register_create_pool_temporary(CLI::App& root, const Globals& globals, Runner& runner);

}  // namespace cumemctl::cmd
