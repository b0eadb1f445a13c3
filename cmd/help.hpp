// What --help shows beyond CLI11's option list: each command's examples and the global options at the
// end of its help, no "Excludes:" lists, and the short usage of a bare `cumemctl`.
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

namespace cumemctl::cmd {

// CLI11's formatter without the "Needs:" and "Excludes:" lists after an option (the option's own text
// and the man page say what goes with what; the parser still refuses the pairs). Set on the root before
// the subcommands are added: they take their parent's formatter when made.
std::shared_ptr<CLI::Formatter> help_formatter();

// Ends the help of the root and of every listed subcommand with two or three examples and a line that
// names the global options. Every listed command has examples (a logic_error names one that has none).
void add_help_footers(CLI::App& root);

// The short usage that a bare `cumemctl` prints (exit 0): the common commands and where the rest is.
std::string short_usage();

}  // namespace cumemctl::cmd
