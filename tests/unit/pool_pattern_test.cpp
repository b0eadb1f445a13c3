#include <doctest/doctest.h>

#include "units.hpp"

#include "gpu/pool/pool_pattern.hpp"
#include "base/error.hpp"

using namespace cumemctl;
using namespace cumemctl::gpu;

using testing_units::GiB;
using testing_units::MiB;

namespace {

// The usage error's message, or "" when the text parses.
std::string refusal(const char* text) {
    try {
        parse_workload_pattern(text);
    } catch (const Error& e) {
        CHECK(e.exit_code() == ExitCode::usage);
        return e.problem().message;
    }
    return "";
}
}  // namespace

TEST_CASE("parse_workload_pattern reads counts, sizes and lists") {
    const WorkloadPattern p = parse_workload_pattern("64x16MiB");
    REQUIRE(p.items.size() == 1);
    CHECK(p.items[0].count == 64);
    CHECK(p.items[0].size == 16 * MiB);
    CHECK(p.allocations() == 64);
    CHECK(p.bytes() == GiB);
    const WorkloadPattern list = parse_workload_pattern("8x1GiB,16x2MiB");
    REQUIRE(list.items.size() == 2);
    CHECK(list.items[1].count == 16);
    CHECK(list.allocations() == 24);
    CHECK(list.bytes() == 8 * GiB + 32 * MiB);
    const WorkloadPattern bare = parse_workload_pattern("3MiB");
    CHECK(bare.items[0].count == 1);
    CHECK(bare.items[0].size == 3 * MiB);
    CHECK(bare.text == "3MiB");
}

TEST_CASE("parse_workload_pattern refuses what does not parse, naming why") {
    CHECK(refusal("") == "invalid workload pattern '': empty");
    CHECK(refusal("x16MiB").find("'' is not a count") != std::string::npos);
    CHECK(refusal("-1x16MiB").find("'-1' is not a count") != std::string::npos);
    CHECK(refusal("64x").find("invalid size ''") != std::string::npos);
    CHECK(refusal("0x16MiB").find("makes no allocation") != std::string::npos);
    CHECK(refusal("4x0").find("allocates zero bytes") != std::string::npos);
    CHECK(refusal("64x16MiB,").find("an empty item") != std::string::npos);
    CHECK(refusal("64x16Mb").find("bits") != std::string::npos);
    CHECK(refusal("2000000x1MiB").find("more than 1000000 allocations") != std::string::npos);
    CHECK(refusal("2x16EiB").find("unknown unit") != std::string::npos);
    CHECK(refusal("3x18446744073709551615").find("more than 2^64-1 bytes in all") != std::string::npos);
}

TEST_CASE("pool_footprint rounds each allocation up to whole granules") {
    const WorkloadPattern p = parse_workload_pattern("64x16MiB,3x1MiB,1x3MiB");
    CHECK(pool_footprint(p, 2 * MiB) == GiB + 3 * 2 * MiB + 4 * MiB);
    CHECK(pool_footprint(p, 1) == p.bytes());
    CHECK_THROWS_AS(pool_footprint(parse_workload_pattern("2x18446744073709551615"), 2 * MiB), Error);
}

TEST_CASE("require_fits refuses a workload above what is free, naming both figures") {
    CHECK_NOTHROW(require_fits("workload '64x16MiB'", GiB, GiB, "device 0's free memory"));
    try {
        require_fits("workload '64x16MiB'", GiB, GiB - 1, "device 0's free memory");
        FAIL("accepted");
    } catch (const NoRoomError& e) {
        CHECK(e.exit_code() == ExitCode::usage);
        CHECK(e.problem().message ==
              "workload '64x16MiB' needs 1 GiB (1073741824 bytes) but device 0's free memory is 1024.00 MiB "
              "(1073741823 bytes); nothing was allocated");
        // The figures as data, for a caller that words the limit as its own option.
        CHECK(e.footprint == GiB);
        CHECK(e.available == GiB - 1);
        CHECK(e.where == "device 0's free memory");
        CHECK(no_room_message(e.what, e.footprint, e.available, "the pool's --max-size").find("--max-size") !=
              std::string::npos);
    }
}

TEST_CASE("shrink_to_fit: fewer allocations of the same sizes, the last item first; none when not one fits") {
    const WorkloadPattern pattern = parse_workload_pattern("64x16MiB");
    const auto same = shrink_to_fit(pattern, 2 * MiB, GiB);
    REQUIRE(same.has_value());
    CHECK(same->text == "64x16MiB");
    const auto half = shrink_to_fit(pattern, 2 * MiB, 256 * MiB);
    REQUIRE(half.has_value());
    CHECK(half->text == "16x16MiB");
    CHECK(pool_footprint(*half, 2 * MiB) == 256 * MiB);
    CHECK(shrink_to_fit(pattern, 2 * MiB, 255 * MiB)->text == "15x16MiB");
    CHECK_FALSE(shrink_to_fit(pattern, 2 * MiB, 15 * MiB).has_value());
    // Two items: the last one goes first, then the one before it shrinks.
    const WorkloadPattern two = parse_workload_pattern("2x1GiB,8x2MiB");
    CHECK(shrink_to_fit(two, 2 * MiB, 2 * GiB + 4 * MiB)->text == "2x1GiB,2x2MiB");
    CHECK(shrink_to_fit(two, 2 * MiB, GiB + 4 * MiB)->text == "1x1GiB");
}
