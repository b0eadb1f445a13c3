#include "matrix/matrix.hpp"

#include <algorithm>
#include <charconv>
#include <set>

#include <fmt/format.h>

#include "matrix/pair_diagnosis.hpp"
#include "matrix/rank_identity.hpp"
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
    return missing_cell(rank, in.timeout).problem.value();
}

std::string cell_text(const Cell& c) {
    if (c.passed()) return c.gbps ? fmt::format("{:.1f}", *c.gbps) : "pass";
    return "FAIL " + c.diagnosis;
}

}  // namespace

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
            info.ok = !card->second.error;
            info.state = info.ok ? "ok" : "failed";
        } else if (in.refused.contains(r)) {
            info.state = "invalid-file";
        } else {
            info.state = "missing";
        }
        m.info.push_back(info);
        std::vector<Cell> row;
        if (const auto found = in.rows.find(r); found != in.rows.end()) {
            row = found->second.cells;
        } else {
            const Problem p = no_row_problem(in, r);
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
                         {"state", i.state}});
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
                              {i.state, tone_of_answer(i.ok)}});
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

std::vector<MatrixInput> inputs_from_reports(const std::vector<nlohmann::json>& reports) {
    std::vector<MatrixInput> out;
    for (const auto& report : reports) {
        if (!report.is_object() || report.value("command", "") != "fabric-matrix") continue;
        const nlohmann::json results = report.value("results", nlohmann::json::object());
        if (!results.is_object() || results.value("mode", "") != "rank") continue;
        const std::string run = results.value("run", "");
        const int rank = results.value("rank", -1);
        const int ranks = results.value("ranks", 0);
        if (rank < 0 || ranks < 1 || rank >= ranks || ranks > kMaxRanks) continue;
        auto it = std::find_if(out.begin(), out.end(), [&](const MatrixInput& m) { return m.run == run; });
        if (it == out.end()) {
            out.push_back(MatrixInput{run, ranks, {}, {}, {}, ipc::Timeout{60000}});
            it = out.end() - 1;
        }
        if (ranks != it->ranks) {
            it->refused[rank] = fmt::format("its report counts {} ranks, not {}", ranks, it->ranks);
            continue;
        }
        try {
            it->cards[rank] = card_from_json(results.at("card"));
            it->rows[rank] = row_from_json(results.at("row"), ranks);
            // A report that holds the whole run (rank 0 through PMIx, or --all-report) brings every card
            // and row its rank collected; a rank's own report, where there is one, wins.
            for (const auto& c : results.value("cards", nlohmann::json::array())) {
                Card card = card_from_json(c);
                if (card.run == run && card.rank >= 0 && card.rank < ranks)
                    it->cards.emplace(card.rank, std::move(card));
            }
            for (const auto& r : results.value("rows", nlohmann::json::array())) {
                Row row = row_from_json(r, ranks);
                if (row.run == run && row.rank >= 0 && row.rank < ranks) it->rows.emplace(row.rank, std::move(row));
            }
        } catch (const Error& e) {
            it->refused[rank] = fmt::format("its report is not valid: {}", e.what());
        } catch (const nlohmann::json::exception& e) {
            it->refused[rank] = fmt::format("its report is not valid: {}", e.what());
        }
    }
    return out;
}

}  // namespace cumemctl::matrix
