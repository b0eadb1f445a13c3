// fleet's answer as a type (report/results.hpp): the summary of the nodes, each path's bandwidth
// against the fleet's median, the matrix of every fabric-matrix run among the reports, and the inputs
// that could not be used; its JSON (the report's results).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fleet/fleet.hpp"
#include "fleet/report_reader.hpp"
#include "matrix/matrix.hpp"
#include "report/results.hpp"

namespace cumemctl::fleet {

struct FleetResults final : Results {
    FleetSummary summary;
    int inputs = 0;                               // the report files given
    double slow_margin = kDefaultSlowMargin;      // as --slow-margin gave it
    std::vector<matrix::Matrix> fabric_matrices;  // built from ranks' reports, then whole ones, in that order
    std::vector<InputProblem> input_problems;     // the inputs', the summary's, then the matrices'
    // A matrix of one report (--local, --summary), as the table names it: its file, node and mode.
    struct WholeMatrix {
        std::string source;
        std::string host;
        std::string mode;
    };
    std::vector<WholeMatrix> whole_matrices;  // each of the fabric_matrices after the ranks' ones

    nlohmann::json to_json() const override;
    // The nodes, the checks, the differences, the slow nodes and the matrices (fleet_views.cpp).
    std::vector<Table> tables(const Report& report) const override;
    // The failing nodes as one Slurm host list (failing_nodes), for scontrol to drain.
    std::string nodelist() const override;
};

// The failing nodes as one Slurm host list ("gpu[003,017]"), "" when none fails.
std::string failing_nodes(const FleetSummary& summary);

}  // namespace cumemctl::fleet
