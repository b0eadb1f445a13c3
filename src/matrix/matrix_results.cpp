#include "matrix/matrix_results.hpp"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "gpu/device/memory_props.hpp"
#include "report/json_fields.hpp"
#include "steps/step_json.hpp"

namespace cumemctl::matrix {
namespace {

nlohmann::json matrix_or_null(const std::optional<Matrix>& m) {
    return m ? to_json(*m) : nlohmann::json(nullptr);
}

// Each --local rank's process, with its GPU's names as its card gave them to the matrix.
nlohmann::json local_json(const MatrixResults::Local& local, const std::optional<Matrix>& m) {
    nlohmann::json ranks = nlohmann::json::array();
    for (const auto& r : local.ranks) {
        const bool known = m && r.rank >= 0 && r.rank < static_cast<int>(m->info.size());
        const RankInfo none;
        const RankInfo& info = known ? m->info[static_cast<std::size_t>(r.rank)] : none;
        ranks.push_back({{"rank", r.rank},
                         {"device", r.device},
                         {"uuid", text_or_null(info.uuid)},
                         {"pci_bus_id", text_or_null(info.pci_bus_id)},
                         {"nvml_index", info.nvml_index ? nlohmann::json(*info.nvml_index) : nlohmann::json(nullptr)},
                         {"pid", r.pid},
                         {"exit_status", r.exit_status},
                         {"problem", r.problem ? cumemctl::to_json(*r.problem) : nlohmann::json(nullptr)},
                         {"warnings", r.warnings},
                         {"steps", steps::steps_json(r.steps)}});
    }
    return {{"mode", "local"},        {"handle_type", gpu::handle_type_name(local.handle_type)},
            {"folder", local.folder}, {"kept", local.kept},
            {"ranks", ranks},         {"matrix", matrix_or_null(m)}};
}

nlohmann::json rank_json(const MatrixResults::Rank& r, const std::optional<Matrix>& m) {
    nlohmann::json j = {{"mode", "rank"},
                        {"run", r.id.run},
                        {"rendezvous", {{"kind", rendezvous_kind_name(r.rendezvous)}, {"where", r.where}}},
                        {"folder", text_or_null(r.folder)},
                        {"rank", r.id.rank},
                        {"ranks", r.id.ranks},
                        {"rank_source", r.id.rank_source},
                        {"device", r.id.device},
                        {"device_source", r.id.device_source},
                        {"handle_type", gpu::handle_type_name(r.handle_type)},
                        {"card", r.card ? to_json(*r.card) : nlohmann::json(nullptr)},
                        {"row", r.row ? to_json(*r.row) : nlohmann::json(nullptr)},
                        {"steps", steps::steps_json(r.steps)},
                        {"matrix", matrix_or_null(m)}};
    if (m) {
        nlohmann::json cards = nlohmann::json::array(), rows = nlohmann::json::array();
        for (const auto& c : r.cards) cards.push_back(to_json(c));
        for (const auto& row : r.rows) rows.push_back(to_json(row));
        j["cards"] = std::move(cards);
        j["rows"] = std::move(rows);
    }
    return j;
}

// What a rank's report says of its run: its run, rank and ranks, checked as the schema types them (a
// rank outside its run's ranks has nothing to read); then its card and row, and the cards and rows it
// collected, each read strictly until the first that is not valid.
MatrixReadBack read_rank(const nlohmann::json& j) {
    const auto run = j.find("run"), rank = j.find("rank"), ranks = j.find("ranks");
    if (run == j.end() || !run->is_string() || rank == j.end() || !rank->is_number_integer() || ranks == j.end() ||
        !ranks->is_number_integer())
        return {.results = std::nullopt, .unreadable = UnreadablePart::rank};
    const auto r = rank->get<std::int64_t>(), n = ranks->get<std::int64_t>();
    if (r < 0 || n < 1 || r >= n || n > kMaxRanks) return {};
    MatrixResults::Rank part;
    part.id.run = run->get<std::string>();
    part.id.rank = static_cast<int>(r);
    part.id.ranks = static_cast<int>(n);
    try {
        part.card = card_from_json(j.at("card"));
        part.row = row_from_json(j.at("row"), part.id.ranks);
        for (const auto& c : j.value("cards", nlohmann::json::array())) part.cards.push_back(card_from_json(c));
        for (const auto& w : j.value("rows", nlohmann::json::array()))
            part.rows.push_back(row_from_json(w, part.id.ranks));
    } catch (const Error& e) {
        part.unreadable = e.what();
    } catch (const nlohmann::json::exception& e) {
        part.unreadable = e.what();
    }
    MatrixResults out;
    out.mode = std::move(part);
    return {.results = std::move(out), .unreadable = std::nullopt};
}

// The whole matrix of --local or --summary (their other members are not read).
MatrixReadBack read_whole(const nlohmann::json& j, bool local) {
    const auto matrix = j.find("matrix");
    if (matrix == j.end()) return {};
    MatrixResults out;
    try {
        out.matrix = matrix_from_json(*matrix);
    } catch (const Error&) {
        return {.results = std::nullopt, .unreadable = UnreadablePart::matrix};
    } catch (const nlohmann::json::exception&) {
        return {.results = std::nullopt, .unreadable = UnreadablePart::matrix};
    }
    if (local) {
        out.mode = MatrixResults::Local{};
    } else {
        out.mode = MatrixResults::Summary{.run = out.matrix->run, .folder = {}};
    }
    return {.results = std::move(out), .unreadable = std::nullopt};
}

}  // namespace

nlohmann::json MatrixResults::to_json() const {
    if (const auto* local = std::get_if<Local>(&mode)) return local_json(*local, matrix);
    if (const auto* rank = std::get_if<Rank>(&mode)) return rank_json(*rank, matrix);
    const auto& summary = std::get<Summary>(mode);
    return {{"mode", "summary"}, {"run", summary.run}, {"folder", summary.folder}, {"matrix", matrix_or_null(matrix)}};
}

std::string_view mode_name(const MatrixResults& results) {
    if (std::holds_alternative<MatrixResults::Local>(results.mode)) return "local";
    if (std::holds_alternative<MatrixResults::Rank>(results.mode)) return "rank";
    return "summary";
}

MatrixReadBack read_matrix_results(const nlohmann::json& results) {
    if (!results.is_object()) return {.results = std::nullopt, .unreadable = UnreadablePart::rank};
    const auto mode = results.find("mode");
    if (mode == results.end()) return {};
    if (!mode->is_string()) return {.results = std::nullopt, .unreadable = UnreadablePart::rank};
    const auto& name = mode->get_ref<const std::string&>();
    if (name == "rank") return read_rank(results);
    if (name == "local" || name == "summary") return read_whole(results, name == "local");
    return {};
}

void RunInputs::add(const MatrixResults::Rank& part, std::size_t source) {
    const std::string& run = part.id.run;
    const int rank = part.id.rank;
    auto [at, made] = index_.try_emplace(run, runs_.size());
    if (made) runs_.push_back(Run{MatrixInput{run, part.id.ranks, {}, {}, {}, ipc::Timeout{60000}}, source});
    MatrixInput& input = runs_[at->second].input;
    if (part.id.ranks != input.ranks) {
        input.refused[rank] = fmt::format("its report counts {} ranks, not {}", part.id.ranks, input.ranks);
        return;
    }
    if (part.card) input.cards[rank] = *part.card;
    if (part.row) input.rows[rank] = *part.row;
    // A report that holds the whole run (rank 0 through PMIx, or --all-report) brings every card and
    // row its rank collected; a rank's own report, where there is one, wins.
    for (const auto& card : part.cards) {
        if (card.run == run && card.rank >= 0 && card.rank < input.ranks) input.cards.emplace(card.rank, card);
    }
    for (const auto& row : part.rows) {
        if (row.run == run && row.rank >= 0 && row.rank < input.ranks) input.rows.emplace(row.rank, row);
    }
    if (!part.unreadable.empty()) input.refused[rank] = fmt::format("its report is not valid: {}", part.unreadable);
}

}  // namespace cumemctl::matrix
