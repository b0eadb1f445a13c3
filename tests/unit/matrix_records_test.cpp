// The cards and rows of fabric-matrix: written and read back, and strict about untrusted text.
#include <doctest/doctest.h>

#include "matrix/records.hpp"

using namespace cumemctl;
using namespace cumemctl::matrix;

namespace {

Card sample_card() {
    Card c;
    c.run = "r1";
    c.rank = 1;
    c.ranks = 2;
    c.host = "node-b";
    c.device = 0;
    c.gpu_uuid = "GPU-00000000-0000-0000-0000-000000000001";
    c.size = 2 << 20;
    c.handle_type = "fabric";
    c.handle = std::string(128, 'a');
    c.seed = 42;
    c.version = "1.0";
    c.driver_version = 13000;
    c.pid = 7;
    return c;
}

std::string card_parse_error(const std::string& text) {
    try {
        parse_card(text);
    } catch (const Error& e) {
        return e.what();
    }
    return "no error";
}

}  // namespace

TEST_CASE("a card survives the round trip") {
    const Card c = parse_card(to_json(sample_card()).dump());
    CHECK(c.rank == 1);
    CHECK(c.host == "node-b");
    CHECK(c.size == 2 << 20);
    CHECK(c.handle == std::string(128, 'a'));
    CHECK(c.seed == 42);
    CHECK_FALSE(c.error.has_value());
    Card failed = sample_card();
    failed.handle.clear();
    failed.size = 0;
    failed.error = Problem{.exit_code = ExitCode::unavailable, .message = "no fabric"};
    const Card f = parse_card(to_json(failed).dump());
    REQUIRE(f.error.has_value());
    CHECK(f.error->message == "no fabric");
    CHECK(f.error->exit_code == ExitCode::unavailable);
}

TEST_CASE("garbage, unknown fields, bad handles and sizes are refused with the reason") {
    CHECK(card_parse_error("\x01\x02garbage") == "the card is not JSON");
    CHECK(card_parse_error("[1,2]") == "the card is not a JSON object");
    // A file's text is held to the records' nesting before a tree is built of it.
    CHECK(card_parse_error(std::string(17, '[') + std::string(17, ']')).starts_with("the card is not JSON: "));
    CHECK(card_parse_error(std::string(16, '[') + std::string(16, ']')) == "the card is not a JSON object");
    nlohmann::json j = to_json(sample_card());
    j["extra"] = 1;
    CHECK(card_parse_error(j.dump()) == "the card has an unknown field 'extra'");
    j = to_json(sample_card());
    j["handle"] = std::string(128, 'Z');
    CHECK(card_parse_error(j.dump()) == "the card's fabric handle is not 128 lowercase hex digits");
    j = to_json(sample_card());
    j["size"] = std::uint64_t{1} << 50;
    CHECK(card_parse_error(j.dump()).find("the card's size") == 0);
    j = to_json(sample_card());
    j["rank"] = 2;
    CHECK(card_parse_error(j.dump()) == "the card: 'rank' is outside 0-1");
    j = to_json(sample_card());
    j["host"] = 5;
    CHECK(card_parse_error(j.dump()).find("'host' is not a string") != std::string::npos);
    j = to_json(sample_card());
    j["handle_type"] = "win32";
    CHECK(card_parse_error(j.dump()).find("neither fabric nor posix-fd") != std::string::npos);
    j = to_json(sample_card());
    j["error"] = {{"message", "x"}, {"cause", ""}, {"remedy", ""}, {"exit_code", 77}, {"kind", "x"}};
    CHECK(card_parse_error(j.dump()).find("exit_code 77 is none of cumemctl's exit codes") != std::string::npos);
    j = to_json(sample_card());
    j["format_version"] = 2;
    CHECK(card_parse_error(j.dump()).find("another format version") != std::string::npos);
}

TEST_CASE("a row holds a cell per rank, in order") {
    Row r{"r1", 0, "node-a", {}};
    Cell pass;
    pass.peer = 0;
    pass.status = CheckStatus::pass;
    pass.gbps = 350.5;
    Cell fail;
    fail.peer = 1;
    fail.status = CheckStatus::fail;
    fail.diagnosis = "imex-channel";
    fail.problem = std::make_shared<const Problem>(Problem{.exit_code = ExitCode::permission, .message = "refused"});
    r.cells = {pass, fail};
    const Row back = parse_row(to_json(r).dump(), 2);
    REQUIRE(back.cells.size() == 2);
    CHECK(back.cells[0].passed());
    CHECK(*back.cells[0].gbps == doctest::Approx(350.5));
    CHECK(back.cells[1].diagnosis == "imex-channel");
    CHECK(back.cells[1].problem->message == "refused");
    CHECK_THROWS_WITH_AS(parse_row(to_json(r).dump(), 3), "the row's cells are not a list of 3", Error);
    CHECK_FALSE(back.cells[1].passed());
    auto broken = to_json(r);
    broken["cells"][1]["status"] = "broken";
    CHECK_THROWS_WITH_AS(parse_row(broken.dump(), 2), "the row's cell 1 has status 'broken'", Error);
    std::swap(r.cells[0], r.cells[1]);
    CHECK_THROWS_WITH_AS(parse_row(to_json(r).dump(), 2), "the row's cell 0 names peer 1", Error);
    CHECK(card_name("r1", 3) == "r1.card.3");
    CHECK(row_name("r1", 3) == "r1.row.3");
    CHECK(done_name("r1", 3) == "r1.done.3");
}
