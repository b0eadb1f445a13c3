// fabric-matrix's answer as a type (report/results.hpp): how the run went, in one of its three ways
// (--local, one rank of a distributed run, --summary of a folder), and its matrix; its JSON (the
// report's results), and that JSON read back where fleet reads the ranks' reports.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "cuda/driver_api.hpp"
#include "matrix/local_run.hpp"
#include "matrix/matrix.hpp"
#include "matrix/rank_identity.hpp"
#include "matrix/records.hpp"
#include "matrix/rendezvous.hpp"
#include "report/results.hpp"
#include "steps/step.hpp"

namespace cumemctl::matrix {

// --local: one rank per GPU of this node, started here.
struct MatrixLocal {
    CUmemAllocationHandleType handle_type = CU_MEM_HANDLE_TYPE_FABRIC;
    std::string folder;  // the rendezvous folder (gone unless kept)
    bool kept = false;
    std::vector<LocalRank> ranks;  // each rank's process, in rank order
};

// One rank of a distributed run (--dir, PMIx). Read back, only its run, rank, ranks, card, row,
// cards and rows are read (what the matrix is built of), and its card and row are none where they
// are not valid.
struct MatrixRank {
    RankIdentity id;
    RendezvousKind rendezvous = RendezvousKind::folder;
    std::string where;   // where the ranks met, as the rendezvous names it
    std::string folder;  // the rendezvous folder; "" through PMIx
    CUmemAllocationHandleType handle_type = CU_MEM_HANDLE_TYPE_FABRIC;
    std::optional<Card> card;  // as published
    std::optional<Row> row;    // as published
    std::vector<steps::Step> steps;
    // Rank 0's, or every rank's with --all-report: every card and row this rank collected, so that
    // fleet builds the whole matrix from this report alone (the one report of a run through PMIx).
    std::vector<Card> cards;
    std::vector<Row> rows;
    std::string unreadable;  // read back: why its card, row, cards or rows are not valid; "" when they are
};

// --summary: the matrix of a run whose files were kept in a folder.
struct MatrixSummary {
    std::string run;
    std::string folder;
};

// The results: the way the run went, and its matrix.
struct MatrixResults final : Results {
    using Local = MatrixLocal;
    using Rank = MatrixRank;
    using Summary = MatrixSummary;

    std::variant<Local, Rank, Summary> mode;
    // --local's and --summary's; a rank's where it reports the whole matrix (rank 0, --all-report);
    // never read back from a rank's report (fleet builds it from the cards and rows).
    std::optional<Matrix> matrix;

    nlohmann::json to_json() const override;
    // The matrix (matrix_tables), or a rank's row without it, and a rank's steps (matrix_views.cpp).
    std::vector<Table> tables(const Report& report) const override;
};

// "local", "rank" or "summary": the results' "mode".
std::string_view mode_name(const MatrixResults& results);

// The part of a report's results that is not of the shape the schema gives: a rank's mode, run, rank
// or ranks (or results that are no object, give a field twice or have more than kMaxFields), or the
// whole matrix of --local or --summary.
enum class UnreadablePart { rank, matrix };

// A fabric-matrix report's results read back from their text as strict_fields.hpp reads another
// process's text (a field, a card, a cell at a time; fields that are not read are passed over): the
// typed results; none where they hold nothing a matrix is built of (no mode, a mode this cumemctl does
// not write, a rank outside its run's ranks, --local or --summary without a matrix); `unreadable` where
// a part is not of the schema's shape. Other processes' text, hostile until checked: what is malformed
// is refused, never thrown.
struct MatrixReadBack {
    std::optional<MatrixResults> results;
    std::optional<UnreadablePart> unreadable;
    std::string refused;  // why a rank's report of the schema's types is not read ("" where it is, or is none)
};
MatrixReadBack read_matrix_results(std::string_view results);

// The inputs of the runs whose ranks' results (read back) are added, folded as each comes so that no
// report need be kept (a copy of a rank's report adds nothing): one per run name, in order of first
// appearance. Every report is another node's text, so none decides by coming first, and a second report
// never hides what a first one says: where two reports give one rank's card or row and they differ, the
// worse of each cell is kept; where reports of one run count different numbers of ranks, the run is built
// of the largest count, and each rank that a report of another count names is refused, so that its
// matrix fails; a rank whose report is not valid is refused whatever other reports say of it.
class RunInputs {
public:
    struct Run {
        MatrixInput input;
        std::size_t first_source = 0;  // the caller's name for where the first report of its count came from
        bool disputed = false;         // its reports count different numbers of ranks: it fails
    };
    // Folds in a rank's report from input `source` (`sources` names the inputs, for the words): what it
    // finds wrong, each the words of an input problem of that report; none where a report adds nothing
    // new or agrees with the others.
    std::vector<std::string> add(const MatrixResults::Rank& part, std::size_t source = 0,
                                 const std::vector<std::string>& sources = {});
    // Each run's input, as its reports make it (above); the reports folded are gone after it.
    std::vector<Run> take();

private:
    // The reports of a run that count one number of ranks, and where each card and row came from.
    struct Counted {
        MatrixInput input;
        std::size_t first_source = 0;
        std::map<int, std::size_t> card_from, row_from;
        std::set<int> named;  // every rank its reports are of, or give a card or a row of
    };
    struct Folded {
        std::string run;
        std::map<int, Counted> by_count;  // rank count -> its reports
    };
    std::vector<Folded> runs_;
    std::map<std::string, std::size_t, std::less<>> index_;  // run name -> its place in runs_
};

}  // namespace cumemctl::matrix
