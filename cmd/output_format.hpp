// What --json and --format ask for, parsed once after the command line: the kind of output every
// command and renderer then compares, never the option's text.
#pragma once

#include <optional>
#include <string_view>

namespace cumemctl::cmd {

enum class OutputFormat { table, json, csv, prometheus, line, html, junit, nfd, nodelist };

// The name --format takes for `format` ("csv" for every CSV layout).
std::string_view format_name(OutputFormat format);

// The format --format's `text` names: a name above, or a CSV layout ("csv", "csv,noheader", ...: its
// flags are csv_layout's to check); nothing for anything else.
std::optional<OutputFormat> parse_format(std::string_view text);

// What a run writes: JSON with --json, else what --format names, else the table.
OutputFormat output_format(bool json, std::string_view format_text);

}  // namespace cumemctl::cmd
