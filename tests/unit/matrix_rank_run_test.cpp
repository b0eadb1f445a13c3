// One rank of fabric-matrix through the fake driver: alone, it reads its own memory and leaves
// nothing behind; with a rank that never comes, it says so after the timeout and still leaves nothing.
#include <doctest/doctest.h>

#include <memory>

#include "fake_driver.hpp"
#include "matrix/rank_run.hpp"

using namespace cumemctl;
using namespace cumemctl::matrix;
using namespace std::chrono_literals;

namespace {

RankRequest request_of(int ranks) {
    RankRequest r;
    r.id = RankIdentity{0, ranks, 1, "t", "given", "given"};
    r.handle_type = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    r.timeout = 300ms;
    r.poll = 5ms;
    r.driver_version = 13030;
    return r;
}

// The folder rendezvous over `dir`, for one run_rank call.
FolderRendezvous& folder(const RendezvousDir& dir) {
    static std::unique_ptr<FolderRendezvous> rv;
    rv = std::make_unique<FolderRendezvous>(dir);
    return *rv;
}

}  // namespace

TEST_CASE("a rank alone makes, checks and releases its memory, and removes its files") {
    const DriverApi& api = testing_driver::fake_driver().api();
    RendezvousDir dir = RendezvousDir::make_private();
    testing_driver::use_fake_device(1);
    const std::size_t before = testing_driver::fake_free_memory();
    RankResult result;
    run_rank(api, folder(dir), request_of(1), result);
    CHECK_FALSE(result.problem.has_value());
    REQUIRE(result.row.cells.size() == 1);
    CHECK(result.row.cells[0].passed());
    CHECK(result.row.cells[0].gbps.has_value());
    CHECK(result.card.size > 0);
    CHECK(result.card.handle_type == "posix-fd");
    CHECK(dir.names().empty());
    testing_driver::use_fake_device(1);
    CHECK(testing_driver::fake_free_memory() == before);
    std::string names;
    for (const auto& s : result.steps) names += s.name + " ";
    CHECK(names.find("create") != std::string::npos);
    CHECK(names.find("wait-rows") != std::string::npos);
    dir.remove_all();
}

TEST_CASE("a rank that never comes is named after the timeout; nothing is left allocated or on disk") {
    const DriverApi& api = testing_driver::fake_driver().api();
    RendezvousDir dir = RendezvousDir::make_private();
    testing_driver::use_fake_device(1);
    const std::size_t before = testing_driver::fake_free_memory();
    RankResult result;
    run_rank(api, folder(dir), request_of(2), result);
    CHECK(result.missing_cards == std::set<int>{1});
    REQUIRE(result.row.cells.size() == 2);
    CHECK(result.row.cells[0].passed());
    CHECK(result.row.cells[1].diagnosis == "missing");
    CHECK(result.row.cells[1].problem->message == "rank 1 never came: no card within 0.3 s");
    CHECK(dir.names().empty());
    testing_driver::use_fake_device(1);
    CHECK(testing_driver::fake_free_memory() == before);
    dir.remove_all();
}

TEST_CASE("a garbage card in the folder costs that pair, not the rank") {
    const DriverApi& api = testing_driver::fake_driver().api();
    RendezvousDir dir = RendezvousDir::make_private();
    dir.publish("t.card.1", "not json at all");
    RankResult result;
    run_rank(api, folder(dir), request_of(2), result);
    CHECK_FALSE(result.problem.has_value());
    CHECK(result.refused.at(1) == "its card is not valid: the card is not JSON");
    CHECK(result.row.cells[1].diagnosis == "invalid-file");
    CHECK(result.row.cells[0].passed());
    // Only the stray file is left: this rank removed its own.
    CHECK(dir.names() == std::vector<std::string>{"t.card.1"});
    dir.remove_all();
}
