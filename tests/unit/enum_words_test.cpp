// base/enum_words.hpp: one table gives a value's word and a word's value; a value the table lacks reads
// as the fallback, and a word it does not know parses to nothing.
#include "base/enum_words.hpp"

#include <doctest/doctest.h>

#include "base/error.hpp"
#include "base/verdict.hpp"

namespace {

enum class Colour { red, green, blue };
constexpr auto kColours = cumemctl::enum_words<Colour>({{Colour::red, "red"}, {Colour::green, "green"}}, "?");

// Checked at compile time: the table is constexpr.
static_assert(kColours.word(Colour::green) == "green");
static_assert(kColours.parse("red") == Colour::red);

}  // namespace

TEST_CASE("enum_words: both directions, the fallback, the words listed") {
    CHECK(kColours.word(Colour::red) == "red");
    CHECK(kColours.word(Colour::blue) == "?");
    CHECK(kColours.parse("green") == Colour::green);
    CHECK_FALSE(kColours.parse("blue").has_value());
    CHECK_FALSE(kColours.parse("").has_value());
    CHECK(kColours.listed() == "red, green");
    CHECK(kColours.listed(" | ") == "red | green");
    CHECK(kColours.find(Colour::green) == "green");
    CHECK_FALSE(kColours.find(Colour::blue).has_value());
}

TEST_CASE("enum_words: the tables that use it read back every word they write") {
    using namespace cumemctl;
    for (const CheckStatus s : statuses_worst_first()) CHECK(parse_status(status_name(s)) == s);
    for (const ExitCode c : {ExitCode::ok, ExitCode::failed, ExitCode::usage, ExitCode::unavailable,
                             ExitCode::permission, ExitCode::interrupted, ExitCode::terminated}) {
        CHECK(exit_code_from_number(static_cast<long long>(c)) == c);
        CHECK(parse_problem_kind(exit_code_name(c), c) == ProblemKind::by_exit_code);
    }
    CHECK(exit_code_name(static_cast<ExitCode>(77)) == "failed");
    CHECK(status_name(static_cast<CheckStatus>(77)) == "fail");
    CHECK(parse_problem_kind("busy", ExitCode::unavailable) == ProblemKind::busy);
    CHECK(parse_problem_kind("input", ExitCode::usage) == ProblemKind::input);
    CHECK_FALSE(parse_problem_kind("nonsense", ExitCode::failed).has_value());
}
