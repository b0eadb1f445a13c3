// The report pages that HtmlRenderer (html_renderer.hpp) writes, each drawn from a report's typed
// results: fabric-matrix's heat map (html_matrix.cpp) and fleet's summary (html_fleet.cpp).
#pragma once

#include <ostream>

#include "fleet/fleet_results.hpp"
#include "matrix/matrix.hpp"

namespace cumemctl::html {

// The heat map of one fabric-matrix run, the legend, the failing pairs and the slowest pairs against
// the median.
void write_matrix(std::ostream& out, const matrix::Matrix& matrix);

// The fleet summary: counts per status and the nodes that did not pass, worst first
// (fleet::node_statuses_worst_first), the failing checks with their nodes and remedies, the nodes that
// differ from the majority, each GPU's memory health, the inputs that could not be used, then each
// fabric-matrix run's heat map.
void write_fleet(std::ostream& out, const fleet::FleetResults& results);

}  // namespace cumemctl::html
