// --format csv for devices, doctor and bandwidth, as nvidia-smi --query-gpu --format=csv,noheader,nounits: the
// fields each command's rows have, the default ones, and the layout from the options.
#pragma once

#include <string>
#include <vector>

#include "report/csv_renderer.hpp"

namespace cumemctl::cmd {

// The fields --fields may name for `command` (empty: the command has no CSV).
std::vector<std::string> csv_fields(const std::string& command);

// The layout of `command`'s CSV from --format and --fields (empty: the default fields); throws a usage
// error for a command without CSV, an unknown field (with the one probably meant) or an unknown flag.
CsvLayout csv_layout(const std::string& command, const std::string& format, const std::string& fields);

}  // namespace cumemctl::cmd
