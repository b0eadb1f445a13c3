// What --help says beyond CLI11's option list: examples and the global options at the end of every
// command's help, and option lines without CLI11's "Needs:" and "Excludes:" lists (the descriptions and
// the manual say which options go together; a wrong pair is a usage error that names both).
#pragma once

#include <memory>

#include <CLI/CLI.hpp>

namespace cumemctl::cmd {

// The formatter of every command's help: CLI11's, less the Needs and Excludes lists.
std::shared_ptr<CLI::Formatter> help_formatter();

// Ends the help of `root` and of each of its visible commands with two or three examples and a line
// naming the global options.
void add_help_footers(CLI::App& root);

}  // namespace cumemctl::cmd
