// fabric-matrix's typed results: their JSON, read back as fleet reads a report's, and refused where a
// part is not of the schema's types (other nodes' text, hostile until checked).
#include <doctest/doctest.h>

#include "matrix/matrix_results.hpp"
#include "matrix/strict_fields.hpp"

using namespace cumemctl;
using namespace cumemctl::matrix;

namespace {

Card card_of(int rank, int ranks) {
    Card c;
    c.run = "r";
    c.rank = rank;
    c.ranks = ranks;
    c.host = "node-" + std::to_string(rank);
    c.size = 2 << 20;
    c.handle_type = "fabric";
    c.handle = std::string(128, '0');
    c.version = "1.0";
    c.driver_version = 13000;
    return c;
}

Row row_of(int rank, int ranks) {
    Row row{"r", rank, "node-" + std::to_string(rank), {}};
    for (int j = 0; j < ranks; ++j) {
        Cell c;
        c.peer = j;
        c.status = CheckStatus::pass;
        c.gbps = 100.0 + j;
        c.seconds = 0.001;
        row.cells.push_back(c);
    }
    return row;
}

// The matrix of two ranks, rank 1 without a row.
Matrix two_ranks() {
    MatrixInput in;
    in.run = "r";
    in.ranks = 2;
    in.cards = {{0, card_of(0, 2)}, {1, card_of(1, 2)}};
    in.rows = {{0, row_of(0, 2)}};
    return build_matrix(in);
}

MatrixResults summary_results() {
    MatrixResults r;
    r.mode = MatrixResults::Summary{"r", "/tmp/run"};
    r.matrix = two_ranks();
    return r;
}

}  // namespace

TEST_CASE("a --summary's matrix is read back as it was written") {
    const nlohmann::json j = summary_results().to_json();
    CHECK(j["mode"] == "summary");
    const MatrixReadBack back = read_matrix_results(j.dump());
    CHECK_FALSE(back.unreadable.has_value());
    REQUIRE(back.results.has_value());
    REQUIRE(back.results->matrix.has_value());
    CHECK(mode_name(*back.results) == "summary");
    CHECK(to_json(*back.results->matrix) == j["matrix"]);
    CHECK(back.results->matrix->failed_pairs == 2);
    CHECK(back.results->matrix->info[1].state == RankState::ok);
}

TEST_CASE("a rank's card and row are read back; what is not valid is said, never thrown") {
    MatrixResults r;
    MatrixResults::Rank part;
    part.id = RankIdentity{1, 2, 0, "r", "given", "given"};
    part.card = card_of(1, 2);
    part.row = row_of(1, 2);
    r.mode = part;
    nlohmann::json j = r.to_json();
    CHECK(j["matrix"].is_null());
    CHECK_FALSE(j.contains("cards"));
    MatrixReadBack back = read_matrix_results(j.dump());
    REQUIRE(back.results.has_value());
    const auto& read = std::get<MatrixResults::Rank>(back.results->mode);
    CHECK(read.id.rank == 1);
    CHECK(read.row->cells.size() == 2);
    CHECK(read.unreadable.empty());
    j["row"]["cells"][0]["status"] = "PASS";
    back = read_matrix_results(j.dump());
    REQUIRE(back.results.has_value());
    const auto& bad = std::get<MatrixResults::Rank>(back.results->mode);
    CHECK(bad.card.has_value());
    CHECK_FALSE(bad.row.has_value());
    CHECK(bad.unreadable == "the row's cell 0 has status 'PASS'");
    RunInputs folded;
    CHECK(folded.add(bad) ==
          std::vector<std::string>{"rank 1 of fabric-matrix run 'r': its report is not valid: the row's cell 0 "
                                   "has status 'PASS': the rank is refused"});
    const std::vector<RunInputs::Run> runs = folded.take();
    REQUIRE(runs.size() == 1);
    const MatrixInput& input = runs[0].input;
    CHECK(input.cards.contains(1));
    CHECK(input.refused.at(1) == "its report is not valid: the row's cell 0 has status 'PASS'");
}

TEST_CASE("results of the wrong types are refused by their part; others hold nothing to read") {
    CHECK(read_matrix_results("null").unreadable == UnreadablePart::rank);
    CHECK(read_matrix_results(R"({"mode": 5})").unreadable == UnreadablePart::rank);
    CHECK(read_matrix_results(R"({"mode": "rank", "run": "r", "rank": "zero", "ranks": 2})").unreadable ==
          UnreadablePart::rank);
    // No mode, another mode, a rank outside its ranks: nothing to read, and nothing wrong.
    for (const nlohmann::json& j : {nlohmann::json::object(), nlohmann::json{{"mode", "other"}},
                                    nlohmann::json{{"mode", "rank"}, {"run", "r"}, {"rank", 2}, {"ranks", 2}}}) {
        const MatrixReadBack back = read_matrix_results(j.dump());
        CHECK_FALSE(back.results.has_value());
        CHECK_FALSE(back.unreadable.has_value());
    }
    nlohmann::json j = summary_results().to_json();
    const auto refused = [&](auto change) {
        nlohmann::json bad = j;
        change(bad["matrix"]);
        const MatrixReadBack back = read_matrix_results(bad.dump());
        return !back.results && back.unreadable == UnreadablePart::matrix;
    };
    CHECK(refused([](nlohmann::json& m) { m["ranks"] = "many"; }));
    CHECK(refused([](nlohmann::json& m) { m["passed"] = true; }));  // its cells say otherwise
    CHECK(refused([](nlohmann::json& m) { m["failed_pairs"] = 0; }));
    CHECK(refused([](nlohmann::json& m) { m["cells"][1].erase(1); }));
    CHECK(refused([](nlohmann::json& m) { m["cells"][0][0]["status"] = "fine"; }));
    CHECK(refused([](nlohmann::json& m) { m["rank_info"][0]["state"] = "great"; }));
    CHECK(refused([](nlohmann::json& m) { m["ranks"] = 65537; }));
    CHECK(refused([](nlohmann::json& m) { m = nullptr; }));
}

TEST_CASE("an older cumemctl's rank_info (gpu_uuid, no bus id) is read") {
    nlohmann::json j = summary_results().to_json();
    for (auto& info : j["matrix"]["rank_info"]) {
        info["gpu_uuid"] = "GPU-1";
        info.erase("uuid");
        info.erase("pci_bus_id");
        info.erase("nvml_index");
    }
    const MatrixReadBack back = read_matrix_results(j.dump());
    REQUIRE(back.results.has_value());
    CHECK(back.results->matrix->info[0].uuid == "GPU-1");
}

TEST_CASE("results are read as text: what is not read costs nothing, and each list stops at its bound") {
    MatrixResults r;
    MatrixResults::Rank part;
    part.id = RankIdentity{0, 2, 0, "r", "given", "given"};
    part.card = card_of(0, 2);
    part.row = row_of(0, 2);
    r.mode = part;
    const nlohmann::json j = r.to_json();
    const auto read = [](const nlohmann::json& results) {
        MatrixReadBack back = read_matrix_results(results.dump());
        REQUIRE(back.results.has_value());
        return std::get<MatrixResults::Rank>(back.results->mode);
    };
    // A field that is not read, of any size, is passed over.
    nlohmann::json padded = j;
    padded["padding"] = nlohmann::json::array();
    for (int i = 0; i < 100000; ++i) padded["padding"].push_back(nlohmann::json::object());
    CHECK(read(padded).unreadable.empty());
    // A list holds no more items than the run has ranks; the first that is not a card ends the reading.
    nlohmann::json more = j;
    more["cards"] = {to_json(card_of(0, 2)), to_json(card_of(1, 2)), to_json(card_of(1, 2))};
    CHECK(read(more).unreadable == "the results' cards: more than 2 items");
    more["cards"] = {0, "x"};
    CHECK(read(more).unreadable == "the card is not a JSON object");
    nlohmann::json cells = j;
    cells["row"]["cells"].push_back(cells["row"]["cells"][0]);
    CHECK(read(cells).unreadable == "the row's cells: more than 2 items");
    // A record is built into a tree only up to kMaxFieldBytes of its text.
    nlohmann::json big = j;
    big["card"]["host"] = std::string(kMaxFieldBytes, 'h');
    CHECK(read(big).unreadable.starts_with("the card is 66"));
    CHECK(read(big).unreadable.ends_with("bytes of JSON, more than the 65536 such a field may have"));
    // An object gives each field once.
    std::string twice = j.dump();
    twice.insert(twice.size() - 1, R"(, "row": null)");
    CHECK(read_matrix_results(twice).unreadable == UnreadablePart::rank);
    nlohmann::json row_twice = j;
    std::string text = row_twice.dump();
    const std::string host = R"("host":)";
    const auto at = text.find(host, text.find(R"("row":)"));
    REQUIRE(at != std::string::npos);
    // Spelt with an escape, a name is the same name.
    text.insert(at, R"("\u0068ost": "a", )");
    MatrixReadBack back = read_matrix_results(text);
    REQUIRE(back.results.has_value());
    CHECK(std::get<MatrixResults::Rank>(back.results->mode).unreadable == "the row gives 'host' twice");
}
