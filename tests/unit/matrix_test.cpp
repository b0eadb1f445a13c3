// The matrix of fabric-matrix and the diagnosis of each pair: passes with bandwidth, the IMEX
// diagnoses, a mismatch, versions, ranks that never came or gave no row; the tables.
#include <doctest/doctest.h>

#include "matrix/matrix.hpp"
#include "matrix/pair_diagnosis.hpp"

using namespace cumemctl;
using namespace cumemctl::gpu;
using namespace cumemctl::matrix;
using namespace std::chrono_literals;

namespace {

Card card_of(int rank, const std::string& host) {
    Card c;
    c.run = "r";
    c.rank = rank;
    c.ranks = 3;
    c.host = host;
    c.size = 2 << 20;
    c.handle_type = "fabric";
    c.handle = std::string(128, '0');
    c.version = "1.0";
    c.driver_version = 13000;
    return c;
}

// A failed import whose CUresult is `result`; its name is printed, never read.
Problem driver_problem(CUresult result, const std::string& name, ExitCode code) {
    return Problem{.exit_code = code,
                   .message = "cuMemImportFromShareableHandle failed: " + name,
                   .cause = "",
                   .remedy = "",
                   .driver = DriverFailure{"cuMemImportFromShareableHandle", static_cast<int>(result), name, "text"}};
}

}  // namespace

TEST_CASE("each kind of pair failure gets its diagnosis") {
    const Card a = card_of(0, "node-a");
    Card b = card_of(1, "node-b");
    CHECK_FALSE(refuse_pair(a, b, 2 << 20).has_value());
    Cell c = failed_cell(
        a, b, driver_problem(CUDA_ERROR_NOT_PERMITTED, "CUDA_ERROR_NOT_PERMITTED", ExitCode::permission), true);
    CHECK(c.diagnosis == "imex-channel");
    CHECK(c.problem->message.find("rank 0 (node-a) reading rank 1 (node-b)") == 0);
    c = failed_cell(a, b, driver_problem(CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", ExitCode::failed), true);
    CHECK(c.diagnosis == "imex-domain");
    CHECK(c.problem->cause.find("not in one IMEX domain") != std::string::npos);
    CHECK(c.problem->remedy.find("nvidia-imex") != std::string::npos);
    c = failed_cell(a, b, driver_problem(CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", ExitCode::failed),
                    false);
    CHECK(c.diagnosis == "driver");
    VerifyResult v;
    v.bytes = 2 << 20;
    v.check_gbps = 300;
    c = checked_cell(a, b, v);
    CHECK(c.passed());
    CHECK(*c.gbps == 300);
    v.mismatches = 3;
    c = checked_cell(a, b, v);
    CHECK(c.diagnosis == "mismatch");
    CHECK(c.problem->cause.find("across the fabric") != std::string::npos);
    b.version = "0.9";
    CHECK(refuse_pair(a, b, 2 << 20)->diagnosis == "version");
    b = card_of(1, "node-b");
    b.driver_version = 12040;
    CHECK(refuse_pair(a, b, 2 << 20)->problem->message.find("driver 12.4") != std::string::npos);
    b = card_of(1, "node-b");
    b.size = 3 << 20;
    CHECK(refuse_pair(a, b, 2 << 20)->diagnosis == "invalid-file");
    b = card_of(1, "node-b");
    b.error = Problem{.exit_code = ExitCode::unavailable, .message = "device 0 has no fabric handles"};
    CHECK(refuse_pair(a, b, 2 << 20)->diagnosis == "rank-failed");
    CHECK(missing_cell(2, 5000ms).problem->message == "rank 2 never came: no card within 5 s");
}

TEST_CASE("the matrix: rows as published, and a failing row for each rank without one") {
    MatrixInput in;
    in.run = "r";
    in.ranks = 3;
    in.timeout = 2000ms;
    in.cards = {{0, card_of(0, "node-a")}, {1, card_of(1, "node-b")}};
    Row row0{"r", 0, "node-a", {}};
    for (int j = 0; j < 3; ++j) {
        Cell c;
        c.peer = j;
        c.status = j == 2 ? CheckStatus::fail : CheckStatus::pass;
        c.gbps = 100.0 + j;
        if (j == 2) c = missing_cell(2, 2000ms);
        row0.cells.push_back(c);
    }
    in.rows = {{0, row0}};
    const Matrix m = build_matrix(in);
    CHECK_FALSE(m.passed());
    CHECK(m.failed_pairs == 1 + 3 + 3);
    CHECK(m.info[1].state == RankState::ok);
    CHECK(m.info[2].state == RankState::missing);
    CHECK(m.cells[1][0].problem->message == "rank 1 (node-b) gave no row within 2 s");
    CHECK(m.cells[2][1].diagnosis == "missing");
    const nlohmann::json j = to_json(m);
    CHECK(j["cells"][0][1]["gbps"] == 101.0);
    CHECK(j["passed"] == false);
    const auto tables = matrix_tables(m);
    REQUIRE(tables.size() == 3);
    CHECK(cell_texts(tables[0].rows[0]) == std::vector<std::string>{"0", "100.0", "101.0", "FAIL missing"});
    CHECK(tables[0].rows[0][1].tone == Tone::plain);
    CHECK(tables[0].rows[0][3].tone == Tone::bad);
    CHECK(tables[2].title == "Failing pairs");
    // Rank 0's one failing pair is a line; ranks 1 and 2, whose every cell fails the same way, one line each.
    REQUIRE(tables[2].rows.size() == 3);
    CHECK(tables[2].rows[0][1].text == "2");
    CHECK(tables[2].rows[1][0].text == "1");
    CHECK(tables[2].rows[1][1].text == "all");
    in.refused[1] = "its row is a symbolic link";
    in.rows.erase(1);
    CHECK(build_matrix(in).cells[1][0].diagnosis == "invalid-file");
}
