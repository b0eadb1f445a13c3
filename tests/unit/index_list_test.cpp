#include <doctest/doctest.h>

#include "base/error.hpp"
#include "util/comma_list.hpp"
#include "util/index_list.hpp"

using namespace cumemctl;

TEST_CASE("parse_index_list reads numbers, lists, ranges and all") {
    CHECK(parse_index_list("0", 4, "device") == std::vector<int>{0});
    CHECK(parse_index_list("2,0,2", 4, "device") == std::vector<int>{0, 2});
    CHECK(parse_index_list("0-3,7", 8, "channel") == std::vector<int>{0, 1, 2, 3, 7});
    CHECK(parse_index_list("all", 3, "device") == std::vector<int>{0, 1, 2});
    CHECK(parse_index_list("all", 0, "device").empty());
}

TEST_CASE("parse_index_list refuses bad lists as usage errors") {
    for (std::string bad : {"", "-1", "x", "1,", "3-1", "1-x", "4", "0-4", "1.5"}) {
        CAPTURE(bad);
        try {
            parse_index_list(bad, 4, "device", false);
            FAIL("accepted");
        } catch (const Error& e) {
            CHECK(e.exit_code() == ExitCode::usage);
        }
    }
    CHECK_THROWS_AS(parse_index_list("all", 4, "device", false), Error);
}

TEST_CASE("split_commas gives every item between commas, empty ones included") {
    using V = std::vector<std::string_view>;
    CHECK(cumemctl::split_commas("") == V{""});
    CHECK(cumemctl::split_commas("a") == V{"a"});
    CHECK(cumemctl::split_commas("a,,b") == V{"a", "", "b"});
    CHECK(cumemctl::split_commas("0,2,") == V{"0", "2", ""});
}
