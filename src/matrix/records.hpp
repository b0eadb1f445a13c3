// What the ranks of a fabric-matrix run publish in the rendezvous folder: each rank's card (who it is
// and the handle to its memory) and its row (what it found reading every other rank's memory), their
// file names, and their JSON with a strict parser: a file from the shared folder is untrusted, so every
// field is checked for presence, type and range, and nothing else is accepted.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "base/verdict.hpp"

namespace cumemctl::matrix {

// The largest files a reader takes: a card, and a row (a cell per rank).
inline constexpr std::size_t kMaxCardBytes = std::size_t{16} * 1024;
inline constexpr std::size_t kMaxRowBytes = std::size_t{16} * 1024 * 1024;
// The largest allocation a rank maps from a card.
inline constexpr std::uint64_t kMaxMatrixSize = std::uint64_t{1} << 40;

// A rank's card: published once its memory is made, filled and exported (or with `error` when it
// could not be).
struct Card {
    std::string run;
    int rank = 0;
    int ranks = 1;
    std::string host;
    int device = 0;        // the device ordinal as this rank sees it
    std::string gpu_uuid;  // GPU-..., empty where unknown
    // The GPU's PCI bus id (00000000:3B:00.0) and NVML's (nvidia-smi's) index: empty and nullopt where
    // unknown, and in the cards of an older cumemctl.
    std::string pci_bus_id;
    std::optional<unsigned> nvml_index;
    std::uint64_t size = 0;
    std::string handle_type;  // "fabric" or "posix-fd"
    std::string handle;       // the fabric handle in hex (128 digits); empty for posix-fd (the socket carries it)
    std::uint64_t seed = 0;   // of the pattern written over the memory
    std::string version;      // cumemctl's
    int driver_version = 0;
    int pid = 0;
    std::optional<Problem> error;  // why this rank has no memory to offer
    // The GPU's multi-node NVLink domain from NVML: attached or not (nullopt: NVML could not say), and
    // where attached its cluster UUID and clique (clique 32766 recurs on every rack: only the pair names
    // a domain). Cards without them (an older cumemctl) are read as unknown.
    std::optional<bool> fabric_attached;
    std::string fabric_cluster_uuid;
    unsigned fabric_clique = 0;
};

// "<cluster UUID>.<clique>" of an attached card, "" otherwise.
std::string fabric_domain_of(const Card& card);

// Whether an importer read an exporter's pattern back: written "pass" and "fail".

// What one importer found for one exporter's memory.
struct Cell {
    int peer = 0;                            // the exporting rank
    CheckStatus status = CheckStatus::fail;  // pass or fail
    std::string diagnosis;                   // for a failure: "imex-channel", "imex-domain", "missing", "mismatch", ...
    std::optional<double> gbps;              // the read's bandwidth, when the check ran
    std::optional<double> seconds;
    // For a failure, why: shared, since a row's cells often fail for one reason, and held apart, since
    // a fleet holds many passing cells (a cell is 88 bytes, not 344).
    std::shared_ptr<const Problem> problem;
    bool passed() const { return status == CheckStatus::pass; }
};

// A rank's row: a cell per rank (its own: the pattern read back by its own device).
struct Row {
    std::string run;
    int rank = 0;
    std::string host;
    std::vector<Cell> cells;
};

// The file names in the folder: "RUN.card.R", "RUN.row.R", "RUN.done.R".
std::string card_name(const std::string& run, int rank);
std::string row_name(const std::string& run, int rank);
std::string done_name(const std::string& run, int rank);

nlohmann::json to_json(const Card& card);
nlohmann::json to_json(const Cell& cell);
nlohmann::json to_json(const Row& row);

// Strict parsers of untrusted text (strict_fields.hpp: a row's cells are read one at a time): throw
// Error (failed) naming what is wrong.
Card parse_card(std::string_view text);
Row parse_row(std::string_view text, int ranks);
// A card already a tree.
Card card_from_json(const nlohmann::json& j);
// The cell of a row of `ranks` cells that reads `peer`'s memory (its place in the row).
Cell cell_from_json(const nlohmann::json& j, int ranks, std::size_t peer);

}  // namespace cumemctl::matrix
