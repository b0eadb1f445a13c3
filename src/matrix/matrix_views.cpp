// fabric-matrix's tables (MatrixResults::tables): the matrix where the results hold it, else the one
// row of a rank; a rank's steps; where --keep left the rendezvous files.
#include <fmt/format.h>

#include "matrix/matrix_results.hpp"
#include "steps/step_json.hpp"

namespace cumemctl::matrix {
namespace {

// A one-row table: this rank's reads.
Table row_table(const Row& row) {
    Table t;
    t.title = fmt::format("Rank {} ({}): reading every rank's memory", row.rank, row.host);
    t.columns = {"owner", "result", "GB/s", "diagnosis"};
    for (const auto& c : row.cells) {
        t.rows.push_back({std::to_string(c.peer),
                          {std::string(status_name(c.status)), tone_of(c.status)},
                          c.gbps ? fmt::format("{:.1f}", *c.gbps) : "-",
                          c.passed() ? "" : c.diagnosis + (c.problem ? ": " + c.problem->message : "")});
    }
    t.wrap_last = true;
    return t;
}

}  // namespace

std::vector<Table> MatrixResults::tables(const Report& /*report*/) const {
    std::vector<Table> tables;
    if (matrix) tables = matrix_tables(*matrix);
    if (const auto* local = std::get_if<Local>(&mode); local != nullptr && local->kept && !tables.empty())
        tables.front().notes.push_back("the rendezvous files are kept in " + local->folder);
    if (const auto* rank = std::get_if<Rank>(&mode)) {
        if (!matrix && rank->row) tables.push_back(row_table(*rank->row));
        tables.push_back(steps::steps_table("Steps", rank->steps));
    }
    return tables;
}

}  // namespace cumemctl::matrix
