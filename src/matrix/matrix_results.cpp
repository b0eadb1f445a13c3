#include "matrix/matrix_results.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

#include <fmt/format.h>

#include "gpu/device/memory_props.hpp"
#include "matrix/strict_fields.hpp"
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

// Results whose mode, run, rank or ranks are not of the schema's shape (or that are no object of it).
MatrixReadBack rank_not_of_shape() {
    return {.results = std::nullopt, .unreadable = UnreadablePart::rank, .refused = {}};
}

// The value of an integer field's text, or none where it is no integer.
std::optional<std::int64_t> integer(std::optional<std::string_view> text) {
    if (!text) return std::nullopt;
    const nlohmann::json j = field_tree(*text, "an integer");
    if (!j.is_number_integer() ||
        (j.is_number_unsigned() &&
         j.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())))
        return std::nullopt;
    return j.get<std::int64_t>();
}

// What a rank's report says of its run: its run, rank and ranks, checked as the schema types them (a
// rank outside its run's ranks has nothing to read); then its card and row, and the cards and rows it
// collected, each read strictly until the first that is not valid, an item at a time.
MatrixReadBack read_rank(const std::vector<FieldText>& fields) {
    const auto run_text = field_text(fields, "run");
    const nlohmann::json run = run_text ? field_tree(*run_text, "the run") : nlohmann::json();
    const auto r = integer(field_text(fields, "rank")), n = integer(field_text(fields, "ranks"));
    if (!run.is_string() || !r || !n) return rank_not_of_shape();
    if (*r < 0 || *n < 1 || *r >= *n || *n > kMaxRanks) {
        return {
            .results = std::nullopt,
            .unreadable = std::nullopt,
            .refused = fmt::format("its rank {} of {} is not one of a run's ranks (at most {})", *r, *n, kMaxRanks)};
    }
    MatrixResults::Rank part;
    part.id.run = run.get<std::string>();
    part.id.rank = static_cast<int>(*r);
    part.id.ranks = static_cast<int>(*n);
    const auto ranks = static_cast<std::size_t>(*n);
    try {
        const auto card = field_text(fields, "card"), row = field_text(fields, "row");
        if (!card || !row) invalid("the results have no 'card' or no 'row'");
        part.card = card_from_json(field_tree(*card, "the card"));
        part.row = parse_row(*row, part.id.ranks);
        if (const auto cards = field_text(fields, "cards")) {
            for_each_item(*cards, "the results' cards", ranks, [&](std::string_view c, std::size_t) {
                part.cards.push_back(card_from_json(field_tree(c, "a card")));
            });
        }
        if (const auto rows = field_text(fields, "rows")) {
            for_each_item(*rows, "the results' rows", ranks,
                          [&](std::string_view w, std::size_t) { part.rows.push_back(parse_row(w, part.id.ranks)); });
        }
    } catch (const Error& e) {
        part.unreadable = e.what();
    }
    MatrixResults out;
    out.mode = std::move(part);
    return {.results = std::move(out), .unreadable = std::nullopt, .refused = {}};
}

// The whole matrix of --local or --summary (their other fields are not read).
MatrixReadBack read_whole(const std::vector<FieldText>& fields, bool local) {
    const auto matrix = field_text(fields, "matrix");
    if (!matrix) return {};
    MatrixResults out;
    try {
        out.matrix = parse_matrix(*matrix);
    } catch (const Error&) {
        return {.results = std::nullopt, .unreadable = UnreadablePart::matrix, .refused = {}};
    }
    if (local) {
        out.mode = MatrixResults::Local{};
    } else {
        out.mode = MatrixResults::Summary{.run = out.matrix->run, .folder = {}};
    }
    return {.results = std::move(out), .unreadable = std::nullopt, .refused = {}};
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

MatrixReadBack read_matrix_results(std::string_view results) {
    std::vector<FieldText> fields;
    try {
        fields = object_fields(results, "the results");
    } catch (const Error&) {
        return rank_not_of_shape();
    }
    const auto mode_text = field_text(fields, "mode");
    if (!mode_text) return {};
    try {
        const nlohmann::json mode = field_tree(*mode_text, "the mode");
        if (!mode.is_string()) return rank_not_of_shape();
        const auto& name = mode.get_ref<const std::string&>();
        if (name == "rank") return read_rank(fields);
        if (name == "local" || name == "summary") return read_whole(fields, name == "local");
    } catch (const Error&) {
        return rank_not_of_shape();
    }
    return {};
}

namespace {

// The name of input `source`, for the words of a problem.
std::string source_name(const std::vector<std::string>& sources, std::size_t source) {
    return source < sources.size() ? sources[source] : fmt::format("input {}", source + 1);
}

// Whether two cards or rows are alike, as their JSON says.
template <class Record>
bool alike(const Record& a, const Record& b) {
    return to_json(a).dump() == to_json(b).dump();
}

// `held` with each cell of `other` (a row of as many cells) that is worse than its own.
void keep_worse(Row& held, const Row& other) {
    for (std::size_t j = 0; j < held.cells.size() && j < other.cells.size(); ++j) {
        if (status_severity(other.cells[j].status) > status_severity(held.cells[j].status))
            held.cells[j] = other.cells[j];
    }
}

}  // namespace

std::vector<std::string> RunInputs::add(const MatrixResults::Rank& part, std::size_t source,
                                        const std::vector<std::string>& sources) {
    std::vector<std::string> problems;
    const std::string& run = part.id.run;
    const int rank = part.id.rank, ranks = part.id.ranks;
    auto [at, made] = index_.try_emplace(run, runs_.size());
    if (made) runs_.push_back(Folded{run, {}});
    Folded& folded = runs_[at->second];
    auto [place, new_count] = folded.by_count.try_emplace(ranks);
    Counted& counted = place->second;
    if (new_count) {
        counted.input = MatrixInput{run, ranks, {}, {}, {}, ipc::Timeout{60000}};
        counted.first_source = source;
    }
    for (const auto& [other, c] : folded.by_count) {
        if (other == ranks) continue;
        problems.push_back(
            fmt::format("rank {} of fabric-matrix run '{}' counts {} ranks, but {} holds a report of the "
                        "run that counts {}: the run fails",
                        rank, run, ranks, source_name(sources, c.first_source), other));
        break;
    }
    counted.named.insert(rank);
    // A card or row that another report gave already: where they differ, the worse is kept.
    std::vector<std::pair<int, std::size_t>> differ;  // rank, the source of the one held
    // Rank r's card or row (`given`) into `held_of`, where it came from into `from`; where another report
    // gave it already and they differ, `keep` keeps the worse.
    const auto take = [&](auto& held_of, std::map<int, std::size_t>& from, int r, const auto& given, auto keep) {
        counted.named.insert(r);
        auto [held, first] = held_of.try_emplace(r, given);
        if (first) {
            from[r] = source;
        } else if (!alike(held->second, given)) {
            differ.emplace_back(r, from[r]);
            keep(held->second, given);
        }
    };
    const auto keep_failed_card = [](Card& held, const Card& card) {
        if (card.error && !held.error) held = card;
    };
    if (part.card) take(counted.input.cards, counted.card_from, rank, *part.card, keep_failed_card);
    if (part.row) take(counted.input.rows, counted.row_from, rank, *part.row, keep_worse);
    // A report that holds the whole run (rank 0 through PMIx, or --all-report) brings every card and row
    // its rank collected, each as another report of that rank; one of another run or of no rank of it is
    // left out.
    int foreign = 0;
    const auto take_all = [&](const auto& collected, auto& held_of, std::map<int, std::size_t>& from, auto keep) {
        for (const auto& given : collected) {
            if (given.run == run && given.rank >= 0 && given.rank < ranks) {
                take(held_of, from, given.rank, given, keep);
            } else {
                ++foreign;
            }
        }
    };
    take_all(part.cards, counted.input.cards, counted.card_from, keep_failed_card);
    take_all(part.rows, counted.input.rows, counted.row_from, keep_worse);
    if (foreign > 0) {
        problems.push_back(
            fmt::format("rank {} of fabric-matrix run '{}' holds {} cards or rows of another run or "
                        "of no rank of its {}: they are left out",
                        rank, run, foreign, ranks));
    }
    if (!differ.empty()) {
        std::sort(differ.begin(), differ.end());
        differ.erase(std::unique(differ.begin(), differ.end()), differ.end());
        const auto& [r, from] = differ.front();
        problems.push_back(fmt::format(
            "rank {} of fabric-matrix run '{}' gives the card or row of rank {}{} unlike {} does: the "
            "worse of each cell is kept",
            rank, run, r, differ.size() > 1 ? fmt::format(" (and of {} more ranks)", differ.size() - 1) : "",
            source_name(sources, from)));
    }
    if (!part.unreadable.empty()) {
        counted.input.refused[rank] = fmt::format("its report is not valid: {}", part.unreadable);
        problems.push_back(
            fmt::format("rank {} of fabric-matrix run '{}': its report is not valid: {}: the rank is "
                        "refused",
                        rank, run, part.unreadable));
    }
    return problems;
}

std::vector<RunInputs::Run> RunInputs::take() {
    std::vector<Run> out;
    out.reserve(runs_.size());
    for (Folded& folded : runs_) {
        auto& [ranks, built] = *folded.by_count.rbegin();  // the largest count
        Run run{std::move(built.input), built.first_source, folded.by_count.size() > 1};
        MatrixInput& input = run.input;
        for (const auto& [count, other] : folded.by_count) {
            if (count == ranks) continue;
            for (const int r : other.named) {
                input.refused.try_emplace(
                    r, fmt::format("a report of it counts {} ranks, another report of the run {}", count, ranks));
            }
        }
        // A rank refused fails, whatever row another report gave of it.
        for (const auto& [r, why] : input.refused) input.rows.erase(r);
        out.push_back(std::move(run));
    }
    runs_.clear();
    index_.clear();
    return out;
}

}  // namespace cumemctl::matrix
