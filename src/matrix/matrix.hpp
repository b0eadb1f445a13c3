// The answer of a fabric-matrix run: an N x N matrix of who read whose memory (row: the reading rank,
// column: the rank whose memory it read), built from the ranks' cards and rows wherever they come
// from (one rank's view of the folder, the --local ranks' answers, a folder after the run, the ranks'
// reports), with a diagnosis for every failing pair; its JSON and its tables.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ipc/timeout.hpp"
#include "matrix/records.hpp"
#include "matrix/rendezvous_dir.hpp"
#include "report/report.hpp"

namespace cumemctl::matrix {

// One rank as the matrix names it.
struct RankInfo {
    int rank = 0;
    std::string host;  // empty where it never came
    int device = -1;
    std::string uuid;                    // the GPU as operators name it, where the rank's card says
    std::string pci_bus_id;              // 00000000:3B:00.0
    std::optional<unsigned> nvml_index;  // nvidia-smi's index
    std::string state;                   // "ok", "failed" (no memory to offer), "missing", "invalid-file"
    bool ok = false;                     // state "ok": the card came and offers memory
};

// The matrix.
struct Matrix {
    std::string run;
    int ranks = 0;
    std::vector<RankInfo> info;            // by rank
    std::vector<std::vector<Cell>> cells;  // cells[reader][owner]
    int failed_pairs = 0;
    bool passed() const { return failed_pairs == 0; }
};

// What the matrix is built from: the cards and rows that were found, and why others were refused.
struct MatrixInput {
    std::string run;
    int ranks = 0;
    std::map<int, Card> cards;
    std::map<int, Row> rows;
    std::map<int, std::string> refused;
    ipc::Timeout timeout{60000};  // how long ranks waited, for the messages
};

// Builds the matrix: a rank without a row gets a failing row that says why (never came, stopped,
// its file refused).
Matrix build_matrix(const MatrixInput& input);

nlohmann::json to_json(const Matrix& matrix);
// The tables for people: the matrix (GB/s per pair), the ranks, and the failing pairs with their
// diagnosis.
std::vector<Table> matrix_tables(const Matrix& matrix);

// The runs whose cards are in the folder ("RUN.card.N"), sorted.
std::vector<std::string> runs_in_folder(const RendezvousDir& dir);
// The input for `run` as the folder holds it now (its cards and rows; the number of ranks from the
// cards). Throws Error (failed) when the folder holds no valid card of that run.
MatrixInput read_folder(const RendezvousDir& dir, const std::string& run);

// The inputs of every run found in fabric-matrix reports of distributed ranks (a report's results hold
// its rank's card and row), one per run name, in order of first appearance; a card or row that does
// not parse is refused for its rank.
std::vector<MatrixInput> inputs_from_reports(const std::vector<nlohmann::json>& reports);

}  // namespace cumemctl::matrix
