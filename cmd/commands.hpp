// The registrar of every subcommand; main.cpp lists them in the order `--help` shows them.
#pragma once

#include "command.hpp"

namespace cumemctl::cmd {

void register_doctor(CLI::App& root, const Globals& globals, Runner& runner);
void register_devices(CLI::App& root, const Globals& globals, Runner& runner);
void register_imex_setup(CLI::App& root, const Globals& globals, Runner& runner);
void register_le_bind(CLI::App& root, const Globals& globals, Runner& runner);
void register_granularity(CLI::App& root, const Globals& globals, Runner& runner);
void register_create(CLI::App& root, const Globals& globals, Runner& runner);
// The hidden second process of the IPC checks (create --import-check, create --pool --ipc-check, doctor).
void register_importer(CLI::App& root, const Globals& globals, Runner& runner);
void register_pool_stats(CLI::App& root, const Globals& globals, Runner& runner);
void register_trim(CLI::App& root, const Globals& globals, Runner& runner);
void register_imex_verify(CLI::App& root, const Globals& globals, Runner& runner);
void register_fleet(CLI::App& root, const Globals& globals, Runner& runner);
// fabric-matrix, and the hidden rank process of its --local mode.
void register_fabric_matrix(CLI::App& root, const Globals& globals, Runner& runner);
void register_matrix_rank(CLI::App& root, const Globals& globals, Runner& runner);
// memtest: every free byte of a GPU's memory tested.
void register_memtest(CLI::App& root, const Globals& globals, Runner& runner);
// bandwidth: each memory path measured against its physical limit.
void register_bandwidth(CLI::App& root, const Globals& globals, Runner& runner);
void register_completion(CLI::App& root, const Globals& globals, Runner& runner);

}  // namespace cumemctl::cmd
