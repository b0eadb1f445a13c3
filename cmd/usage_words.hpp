// Usage errors in the tool's own words: what CLI11 raised (an unknown command or option, a missing or
// extra value, a value not in its set) told as cumemctl tells its other usage errors, with the name
// that was probably meant ("did you mean 'doctor'?") and where the help is.
#pragma once

#include <CLI/CLI.hpp>

#include "report/report.hpp"

namespace cumemctl::cmd {

// The usage error (exit 2) for `error`, raised by `app` parsing argv: message and remedy.
Problem usage_problem(const CLI::ParseError& error, const CLI::App& app, int argc, char** argv);

// Whether `error` asks for help where the word in the command's place names no command
// (`cumemctl doctr --help`): that is the unknown command's usage error, not the general help.
bool help_for_unknown_command(const CLI::ParseError& error, const CLI::App& app, int argc, char** argv);
// The commands a person may run (not the hidden second processes), in the order they were added.
std::vector<std::string> visible_commands(const CLI::App& app);

}  // namespace cumemctl::cmd
