// Shell completion generated from the CLI11 command definitions: a model of the command tree
// (commands, options, what their values can be) and the bash and zsh scripts written from it.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace cumemctl::cmd {

// What an option's or a positional's value can be.
struct ValueSpec {
    bool takes_value = false;          // false for flags
    std::vector<std::string> choices;  // known words (an IsMember check or a LIST:{...} type)
    bool list = false;                 // a comma-separated list of the choices
    bool path = false;                 // a file or folder name (type PATH or FILE)
    bool many = false;                 // a positional that takes any number of values
    std::string name;                  // what the value is called ("format", "shell")
};

// One option: its names ("-d", "--device"), its help and its value.
struct OptionSpec {
    std::vector<std::string> names;
    std::string help;
    ValueSpec value;
};

// One subcommand: name, help, options, and its positional argument if it has one.
struct CommandSpec {
    std::string name;
    std::string help;
    std::vector<OptionSpec> options;
    std::vector<ValueSpec> positionals;
};

// The whole command line: the program's own options and its subcommands.
struct CliSpec {
    std::string program;
    std::vector<OptionSpec> globals;
    std::vector<CommandSpec> commands;
};

// Walks the CLI11 tree of `root`.
CliSpec describe_cli(const CLI::App& root);

// The bash script: a completion function and `complete -F` for the program.
std::string bash_completion(const CliSpec& cli);

// The zsh script: a #compdef function for $fpath (also works when sourced).
std::string zsh_completion(const CliSpec& cli);

}  // namespace cumemctl::cmd
