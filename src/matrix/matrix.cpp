#include "matrix/matrix.hpp"

#include <algorithm>
#include <charconv>
#include <set>

#include <fmt/format.h>

#include "base/enum_words.hpp"
#include "matrix/pair_diagnosis.hpp"
#include "matrix/rank_identity.hpp"
#include "matrix/strict_fields.hpp"
#include "report/json_fields.hpp"

namespace cumemctl::matrix {
namespace {

// Every cell of a reader without a row: why there is none.
Problem no_row_problem(const MatrixInput& in, int rank) {
    if (const auto bad = in.refused.find(rank); bad != in.refused.end()) {
        return Problem{.message = fmt::format("rank {}: {}", rank, bad->second),
                       .cause = "the rendezvous folder holds a file that cannot be trusted or read",
                       .remedy = "remove stray files from the folder, and let only this user write it"};
    }
    if (const auto card = in.cards.find(rank); card != in.cards.end()) {
        return Problem{.message = fmt::format("rank {} ({}) gave no row within {}", rank, card->second.host,
                                              ipc::describe(in.timeout)),
                       .cause = "the rank stopped, failed or hung after it published its memory",
                       .remedy = fmt::format("look at rank {}'s own report and error output", rank)};
    }
    return *missing_cell(rank, in.timeout).problem;
}

std::string cell_text(const Cell& c) {
    if (c.passed()) return c.gbps ? fmt::format("{:.1f}", *c.gbps) : "pass";
    return "FAIL " + c.diagnosis;
}

}  // namespace

namespace {

constexpr auto kRankStateWords = enum_words<RankState>({{RankState::ok, "ok"},
                                                        {RankState::failed, "failed"},
                                                        {RankState::missing, "missing"},
                                                        {RankState::invalid_file, "invalid-file"}},
                                                       "invalid-file");

}  // namespace

std::string_view rank_state_name(RankState state) {
    return kRankStateWords.word(state);
}

std::optional<RankState> parse_rank_state(std::string_view name) {
    return kRankStateWords.parse(name);
}

Matrix build_matrix(const MatrixInput& in) {
    Matrix m;
    m.run = in.run;
    m.ranks = in.ranks;
    for (int r = 0; r < in.ranks; ++r) {
        RankInfo info;
        info.rank = r;
        if (const auto card = in.cards.find(r); card != in.cards.end()) {
            info.host = card->second.host;
            info.device = card->second.device;
            info.uuid = card->second.gpu_uuid;
            info.pci_bus_id = card->second.pci_bus_id;
            info.nvml_index = card->second.nvml_index;
            info.state = card->second.error ? RankState::failed : RankState::ok;
        } else if (in.refused.contains(r)) {
            info.state = RankState::invalid_file;
        } else {
            info.state = RankState::missing;
        }
        m.info.push_back(info);
        std::vector<Cell> row;
        if (const auto found = in.rows.find(r); found != in.rows.end()) {
            row = found->second.cells;
        } else {
            const auto p = std::make_shared<const Problem>(no_row_problem(in, r));
            const std::string kind = in.refused.contains(r) ? "invalid-file" : "missing";
            for (int j = 0; j < in.ranks; ++j) {
                Cell c;
                c.peer = j;
                c.status = CheckStatus::fail;
                c.diagnosis = kind;
                c.problem = p;
                row.push_back(c);
            }
        }
        m.failed_pairs +=
            static_cast<int>(std::count_if(row.begin(), row.end(), [](const Cell& c) { return !c.passed(); }));
        m.cells.push_back(std::move(row));
    }
    return m;
}

nlohmann::json to_json(const Matrix& m) {
    nlohmann::json ranks = nlohmann::json::array();
    for (const auto& i : m.info) {
        ranks.push_back({{"rank", i.rank},
                         {"host", text_or_null(i.host)},
                         {"device", i.device < 0 ? nlohmann::json(nullptr) : nlohmann::json(i.device)},
                         {"uuid", text_or_null(i.uuid)},
                         {"pci_bus_id", text_or_null(i.pci_bus_id)},
                         {"nvml_index", i.nvml_index ? nlohmann::json(*i.nvml_index) : nlohmann::json(nullptr)},
                         {"state", rank_state_name(i.state)}});
    }
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& row : m.cells) {
        nlohmann::json cells = nlohmann::json::array();
        for (const auto& c : row) cells.push_back(to_json(c));
        rows.push_back(cells);
    }
    return {{"run", m.run},       {"ranks", m.ranks}, {"passed", m.passed()}, {"failed_pairs", m.failed_pairs},
            {"rank_info", ranks}, {"cells", rows}};
}

namespace {

// Rank `rank`'s entry of a matrix's rank_info.
RankInfo rank_info_from_json(const nlohmann::json& j, int rank) {
    StrictFields f(j, fmt::format("the matrix's rank {}", rank));
    RankInfo i;
    i.rank = static_cast<int>(f.integer("rank", rank, rank));
    i.host = f.text_or_empty("host");
    if (!f.at("device").is_null()) i.device = static_cast<int>(f.integer("device", 0, 1 << 20));
    i.uuid = f.text_or_empty(j.contains("uuid") || !j.contains("gpu_uuid") ? "uuid" : "gpu_uuid");
    if (j.contains("pci_bus_id")) i.pci_bus_id = f.text_or_empty("pci_bus_id");
    if (f.has("nvml_index")) i.nvml_index = static_cast<unsigned>(f.integer("nvml_index", 0, 1 << 20));
    const std::string state = f.text("state");
    const std::optional<RankState> parsed = parse_rank_state(state);
    if (!parsed) invalid(fmt::format("the matrix's rank {} has state '{}'", rank, state));
    i.state = *parsed;
    return i;
}

}  // namespace

Matrix parse_matrix(std::string_view text) {
    StrictFields f(text, "the matrix");
    Matrix m;
    m.run = f.text("run");
    m.ranks = static_cast<int>(f.integer("ranks", 1, kMaxRanks));
    const auto ranks = static_cast<std::size_t>(m.ranks);
    const nlohmann::json& passed = f.at("passed");
    const std::int64_t failed = f.integer("failed_pairs", 0, std::int64_t{m.ranks} * m.ranks);
    // A list of exactly `ranks` items at `key`, each read by `item`.
    const auto list_of = [&](const std::string& key, const auto& item) {
        const std::string what = fmt::format("the matrix's '{}'", key);
        std::size_t count = 0;
        for_each_item(f.list(key), what, ranks, [&](std::string_view text, std::size_t i) {
            item(text, i);
            count = i + 1;
        });
        if (count != ranks) invalid(fmt::format("{} is not a list of {}", what, m.ranks));
    };
    list_of("rank_info", [&](std::string_view text, std::size_t r) {
        const std::string what = fmt::format("the matrix's rank {}", r);
        m.info.push_back(rank_info_from_json(field_tree(text, what), static_cast<int>(r)));
    });
    list_of("cells", [&](std::string_view row, std::size_t r) {
        const std::string what = fmt::format("the matrix's row {}", r);
        std::vector<Cell> cells;
        for_each_item(row, what, ranks, [&](std::string_view cell, std::size_t c) {
            cells.push_back(cell_from_json(field_tree(cell, fmt::format("{}'s cell {}", what, c)), m.ranks, c));
        });
        if (cells.size() != ranks) invalid(fmt::format("{} is not a list of {} cells", what, m.ranks));
        m.failed_pairs +=
            static_cast<int>(std::count_if(cells.begin(), cells.end(), [](const Cell& c) { return !c.passed(); }));
        m.cells.push_back(std::move(cells));
    });
    if (!passed.is_boolean() || passed.get<bool>() != m.passed() || failed != m.failed_pairs)
        invalid("the matrix's 'passed' and 'failed_pairs' are not what its cells say");
    return m;
}

namespace {

// The grid of GB/s, a row per reader. It fits 100 columns (eight ranks that all fail were 160): where
// the diagnoses make it wider, a failing cell is "FAIL [n]" and each diagnosis is said once below, its
// number in the cells.
Table grid_table(const Matrix& m) {
    Table grid;
    grid.title =
        fmt::format("Fabric matrix, run {}: GB/s read by each rank (row) from each rank's memory (column)", m.run);
    grid.columns.push_back("reader");
    for (int j = 0; j < m.ranks; ++j) grid.columns.push_back(std::to_string(j));
    for (int i = 0; i < m.ranks; ++i) {
        std::vector<TableCell> row{std::to_string(i)};
        for (const auto& c : m.cells[static_cast<std::size_t>(i)])
            row.push_back({cell_text(c), c.passed() ? Tone::plain : Tone::bad});
        grid.rows.push_back(std::move(row));
    }
    std::size_t wide = 2 + grid.columns.front().size();
    for (std::size_t c = 1; c < grid.columns.size(); ++c) {
        std::size_t column = grid.columns[c].size();
        for (const auto& row : grid.rows) column = std::max(column, row[c].text.size());
        wide += 2 + column;
    }
    std::vector<std::string> legend;
    if (wide > 100) {
        for (int i = 0; i < m.ranks; ++i) {
            for (int j = 0; j < m.ranks; ++j) {
                const Cell& c = m.cells[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
                if (c.passed()) continue;
                auto it = std::find(legend.begin(), legend.end(), c.diagnosis);
                if (it == legend.end()) it = legend.insert(legend.end(), c.diagnosis);
                grid.rows[static_cast<std::size_t>(i)][static_cast<std::size_t>(j) + 1] = {
                    fmt::format("FAIL [{}]", it - legend.begin() + 1), Tone::bad};
            }
        }
    }
    grid.notes.push_back(m.passed() ? fmt::format("every pair of {} ranks passed", m.ranks)
                                    : fmt::format("{} of {} pairs failed", m.failed_pairs, m.ranks * m.ranks));
    for (std::size_t n = 0; n < legend.size(); ++n) grid.notes.push_back(fmt::format("[{}] {}", n + 1, legend[n]));
    return grid;
}

// The failing pairs, each remedy once below them.
Table failures_table(const Matrix& m) {
    Table failures;
    failures.title = "Failing pairs";
    failures.columns = {"reader", "owner", "diagnosis", "what happened"};
    failures.wrap_last = true;
    std::set<std::string> remedies;
    for (int i = 0; i < m.ranks; ++i) {
        const auto& row = m.cells[static_cast<std::size_t>(i)];
        // A row whose every cell failed the same way (a rank without memory, or without a row) is one line.
        const bool one_line = std::all_of(row.begin(), row.end(), [&](const Cell& c) {
            return !c.passed() && c.diagnosis == row.front().diagnosis &&
                   (c.problem ? c.problem->message : "") == (row.front().problem ? row.front().problem->message : "");
        });
        for (const auto& c : row) {
            if (c.passed()) continue;
            std::string what = c.problem ? c.problem->message : "";
            if (c.problem && !c.problem->cause.empty()) what += "; cause: " + c.problem->cause;
            failures.rows.push_back({std::to_string(i), one_line ? "all" : std::to_string(c.peer), c.diagnosis, what});
            if (c.problem && !c.problem->remedy.empty()) remedies.insert(c.problem->remedy);
            if (one_line) break;
        }
    }
    for (const auto& r : remedies) failures.notes.push_back("hint: " + r);
    return failures;
}

}  // namespace

std::vector<Table> matrix_tables(const Matrix& m) {
    Table ranks;
    ranks.title = "Ranks";
    ranks.columns = {"rank", "host", "device", "GPU", "state"};
    for (const auto& i : m.info) {
        ranks.rows.push_back({std::to_string(i.rank),
                              i.host.empty() ? "-" : i.host,
                              i.device < 0 ? "-" : std::to_string(i.device),
                              i.uuid.empty() ? "-" : i.uuid,
                              {std::string(rank_state_name(i.state)), tone_of_answer(i.ok())}});
    }
    std::vector<Table> out{grid_table(m), std::move(ranks)};
    if (!m.passed()) out.push_back(failures_table(m));
    return out;
}

std::vector<std::string> runs_in_folder(const RendezvousDir& dir) {
    std::set<std::string> runs;
    for (const auto& name : dir.names()) {
        const auto at = name.rfind(".card.");
        if (at == std::string::npos || at == 0) continue;
        const std::string number = name.substr(at + 6);
        int rank = -1;
        const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), rank);
        if (ec != std::errc() || end != number.data() + number.size() || number.empty()) continue;
        runs.insert(name.substr(0, at));
    }
    return {runs.begin(), runs.end()};
}

MatrixInput read_folder(const RendezvousDir& dir, const std::string& run) {
    MatrixInput in;
    in.run = run;
    // The number of ranks: what the valid cards agree on.
    std::map<int, Card> cards;
    std::map<int, std::string> refused;
    for (const auto& name : dir.names()) {
        const std::string prefix = run + ".card.";
        if (name.rfind(prefix, 0) != 0) continue;
        int rank = -1;
        const std::string number = name.substr(prefix.size());
        const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), rank);
        if (ec != std::errc() || end != number.data() + number.size() || rank < 0 || rank >= kMaxRanks) continue;
        const FileRead f = dir.read(name, kMaxCardBytes);
        if (!f.usable()) {
            refused[rank] = fmt::format("its card {}", f.refusal);
            continue;
        }
        try {
            Card c = parse_card(f.content);
            if (c.run != run || c.rank != rank) throw Error(ExitCode::failed, "it names another run or rank");
            in.ranks = std::max(in.ranks, c.ranks);
            cards[rank] = std::move(c);
        } catch (const Error& e) {
            refused[rank] = fmt::format("its card is not valid: {}", e.what());
        }
    }
    if (cards.empty()) {
        throw Error(ExitCode::failed, fmt::format("{} holds no valid card of run '{}'", dir.path(), run),
                    "give the folder and the run of a fabric-matrix run that keeps its files");
    }
    for (auto& [rank, card] : cards) {
        if (card.ranks == in.ranks && rank < in.ranks) in.cards[rank] = std::move(card);
    }
    for (const auto& [rank, why] : refused) {
        if (rank < in.ranks) in.refused[rank] = why;
    }
    for (int r = 0; r < in.ranks; ++r) {
        const FileRead f = dir.read(row_name(run, r), kMaxRowBytes);
        if (!f.present) continue;
        if (!f.usable()) {
            in.refused[r] = fmt::format("its row {}", f.refusal);
            continue;
        }
        try {
            Row row = parse_row(f.content, in.ranks);
            if (row.run != run || row.rank != r) throw Error(ExitCode::failed, "it names another run or rank");
            in.rows[r] = std::move(row);
        } catch (const Error& e) {
            in.refused[r] = fmt::format("its row is not valid: {}", e.what());
        }
    }
    return in;
}

}  // namespace cumemctl::matrix
