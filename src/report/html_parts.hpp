// The parts that the HTML pages share (html_renderer.cpp, html_matrix.cpp, html_fleet.cpp): escaping,
// the colour scale of the heat map, and the page sections each command's page is made of. Pages are
// built from a report's JSON results (the schema's shapes), so a saved report makes the same page.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace cumemctl::html {

// Text for HTML text and attribute values: & < > " ' escaped.
std::string escape(std::string_view text);

// The colours of the heat map and the legend.
inline constexpr const char* kFailColour = "#d7191c";     // a pair that failed
inline constexpr const char* kMissingColour = "#bdbdbd";  // no measurement (a pass without GB/s)

// The colour of a passing pair reading `gbps` on a scale from 0 (orange) through yellow to `max_gbps`
// (blue), as "#rrggbb".
std::string scale_colour(double gbps, double max_gbps);

// The heat map of one fabric-matrix run (its `matrix` JSON: rank_info, cells), the legend, the failing
// pairs and the slowest pairs against the median.
void write_matrix(std::ostream& out, const nlohmann::json& matrix);

// The fleet summary (fleet's results JSON): counts per status and the nodes that did not pass, in the
// order of `node_statuses` (worst first; a status the results name beyond them follows), the failing
// checks with their nodes and remedies, the nodes that differ from the majority, each GPU's memory
// health, then each fabric-matrix run's heat map.
void write_fleet(std::ostream& out, const nlohmann::json& results, const std::vector<std::string>& node_statuses);

}  // namespace cumemctl::html
