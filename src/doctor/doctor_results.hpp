// What doctor answers, as every renderer takes it: a run's checks (DoctorResults), or the list of the
// checks there are (CheckList).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "doctor/registry.hpp"
#include "doctor/runner.hpp"
#include "report/csv_renderer.hpp"
#include "report/results.hpp"

namespace cumemctl::doctor {

// A run: each check's result with the names of its GPU, the counts of each verdict and the run's own.
class DoctorResults : public Results, public CsvRows {
public:
    explicit DoctorResults(DoctorRun run);

    const DoctorRun& run() const { return run_; }
    // How many checks ended with each status, indexed by CheckStatus (count_statuses).
    const std::array<int, kStatusCount>& counts() const { return counts_; }
    // The run's verdict: the worst of its checks' (run_status).
    CheckStatus status() const { return run_status(counts_); }

    nlohmann::json to_json() const override;
    std::vector<CsvRow> csv_rows() const override;
    // The --json names of the CSV's columns, in the order of csv_rows' values.
    static const std::vector<std::string>& csv_columns();
    // The one-line summary (summary_line.hpp).
    std::string line() const override;

private:
    DoctorRun run_;
    std::array<int, kStatusCount> counts_{};
};

// --list-checks: every check of the catalogue, in the order doctor runs them.
class CheckList final : public Results {
public:
    nlohmann::json to_json() const override;
    // One row a check: its id, scope and what it checks.
    std::vector<Table> tables(const Report& report) const override;
};

}  // namespace cumemctl::doctor
