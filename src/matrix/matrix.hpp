// The answer of a fabric-matrix run: an N x N matrix of who read whose memory (row: the reading rank,
// column: the rank whose memory it read), built from the ranks' cards and rows wherever they come
// from (one rank's view of the folder, the --local ranks' answers, a folder after the run, the ranks'
// reports), with a diagnosis for every failing pair; its JSON and its tables.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ipc/timeout.hpp"
#include "matrix/records.hpp"
#include "matrix/rendezvous_dir.hpp"
#include "report/report.hpp"

namespace cumemctl::matrix {

// What came of a rank's card: it came and offers memory (ok), it came without memory to offer (failed),
// it never came (missing), or its file was refused (invalid_file).
enum class RankState { ok, failed, missing, invalid_file };

// "ok", "failed", "missing", "invalid-file".
std::string_view rank_state_name(RankState state);
// The state that rank_state_name spells `name`, or none.
std::optional<RankState> parse_rank_state(std::string_view name);

// One rank as the matrix names it.
struct RankInfo {
    int rank = 0;
    std::string host;  // empty where it never came
    int device = -1;
    std::string uuid;                    // the GPU as operators name it, where the rank's card says
    std::string pci_bus_id;              // 00000000:3B:00.0
    std::optional<unsigned> nvml_index;  // nvidia-smi's index
    RankState state = RankState::missing;
    bool ok() const { return state == RankState::ok; }
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
// A matrix's text as to_json wrote it (a report's, read back), read a cell at a time
// (strict_fields.hpp): each rank's identity, a cell per pair as a row's cells are read (records.hpp), and
// its failed pairs and verdict as its cells give them; throws Error (failed) naming what is not of that
// shape. Fields beside the ones read are left alone, and a rank's "gpu_uuid" (an older cumemctl's) is
// read as its "uuid".
Matrix parse_matrix(std::string_view text);
// The tables for people: the matrix (GB/s per pair), the ranks, and the failing pairs with their
// diagnosis.
std::vector<Table> matrix_tables(const Matrix& matrix);

// The runs whose cards are in the folder ("RUN.card.N"), sorted.
std::vector<std::string> runs_in_folder(const RendezvousDir& dir);
// The input for `run` as the folder holds it now (its cards and rows; the number of ranks from the
// cards). Throws Error (failed) when the folder holds no valid card of that run.
MatrixInput read_folder(const RendezvousDir& dir, const std::string& run);

}  // namespace cumemctl::matrix
