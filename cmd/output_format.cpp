#include "output_format.hpp"

#include <array>
#include <utility>

namespace cumemctl::cmd {
namespace {

constexpr std::array<std::pair<OutputFormat, std::string_view>, 9> kNames{{{OutputFormat::table, "table"},
                                                                           {OutputFormat::json, "json"},
                                                                           {OutputFormat::csv, "csv"},
                                                                           {OutputFormat::prometheus, "prometheus"},
                                                                           {OutputFormat::line, "line"},
                                                                           {OutputFormat::html, "html"},
                                                                           {OutputFormat::junit, "junit"},
                                                                           {OutputFormat::nfd, "nfd"},
                                                                           {OutputFormat::nodelist, "nodelist"}}};

}  // namespace

std::string_view format_name(OutputFormat format) {
    for (const auto& [f, name] : kNames) {
        if (f == format) return name;
    }
    return "table";
}

std::optional<OutputFormat> parse_format(std::string_view text) {
    if (text.starts_with("csv,")) return OutputFormat::csv;
    for (const auto& [f, name] : kNames) {
        if (name == text) return f;
    }
    return std::nullopt;
}

OutputFormat output_format(bool json, std::string_view format_text) {
    if (json) return OutputFormat::json;
    return parse_format(format_text).value_or(OutputFormat::table);
}

}  // namespace cumemctl::cmd
