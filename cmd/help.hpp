// --help in the tool's words: the formatter (usage line, value names, "Commands:"), each command's
// examples and the global options at the end of its help, and the short usage of a bare `cumemctl`.
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

namespace cumemctl::cmd {

// The formatter of every --help: "Usage: cumemctl COMMAND [OPTIONS]", "Commands:", each option with a
// value name that says what to give (SIZE, DEVICE, LIST, N) and none of CLI11's type tags (TEXT, INT,
// FLOAT:NONNEGATIVE, REQUIRED) or "Needs:" and "Excludes:" lists (the option's own text and the man page
// say what goes with what; the parser still refuses the pairs). Set on the root before the subcommands
// are added: they take their parent's formatter when made.
std::shared_ptr<CLI::Formatter> help_formatter();

// What an option's value is called in --help and in a usage error ("--device needs a value (DEVICE)"):
// a short list of choices ({none,fabric}), the type name the option was given (PATH, SECONDS, LIST), or,
// for an option with only CLI11's stored type (TEXT, INT) and for an argument, a name from its own
// (--size SIZE, REPORTS).
std::string value_name(const CLI::Option& opt);

// Ends the help of the root and of every listed subcommand with two or three examples and a line that
// names the global options. Every listed command has examples (a logic_error names one that has none).
void add_help_footers(CLI::App& root);

// The short usage that a bare `cumemctl` prints (exit 0): the common commands and where the rest is.
std::string short_usage();

}  // namespace cumemctl::cmd
