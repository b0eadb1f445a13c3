#include <doctest/doctest.h>

#include "util/duration.hpp"
#include "util/suggest.hpp"

using namespace cumemctl;

TEST_CASE("closest_name: the name a typo most likely meant, or none") {
    const std::vector<std::string> commands{"doctor", "devices", "fleet", "trim", "create"};
    CHECK(closest_name("doctr", commands) == "doctor");
    CHECK(closest_name("devcies", commands) == "devices");  // two neighbours swapped: one edit
    CHECK(closest_name("DOCTOR", commands) == "doctor");
    CHECK(closest_name("flet", commands) == "fleet");
    CHECK_FALSE(closest_name("frobnicate", commands).has_value());
    CHECK_FALSE(closest_name("doctor", commands).has_value());  // no typo
    CHECK_FALSE(closest_name("", commands).has_value());
    CHECK(closest_name("crea", commands) == "create");  // the one name it begins
    const std::vector<std::string> options{"--checks", "--device", "--json", "-d"};
    CHECK(closest_name("--chekcs", options) == "--checks");
    CHECK(closest_name("--devcie", options) == "--device");
    CHECK(did_you_mean("--jsno", options) == "; did you mean '--json'?");
    CHECK(did_you_mean("--zzzzzz", options).empty());
    // One letter is a guess only in the other case: -x is as near -h as -d, and so near neither.
    const std::vector<std::string> short_options{"-h", "-d", "-v", "--help"};
    CHECK_FALSE(closest_name("-x", short_options).has_value());
    CHECK(closest_name("-D", short_options) == "-d");
}

TEST_CASE("format_duration: one time format, three digits in the unit that fits") {
    CHECK(format_duration(0) == "0 s");
    CHECK(format_duration(5.2e-6) == "5.2 us");
    CHECK(format_duration(0.0012345) == "1.23 ms");
    CHECK(format_duration(0.412) == "412 ms");
    CHECK(format_duration(1.0234) == "1.02 s");
    CHECK(format_duration(1234.5) == "1234 s");
    // Where three digits round up to the next unit, the next unit (never "1e+03 ms").
    CHECK(format_duration(0.0009996) == "1 ms");
    CHECK(format_duration(0.9996) == "1 s");
    CHECK(format_duration(999.6) == "1000 s");
}

TEST_CASE("format_age: the largest unit that leaves 2 of it, rounded down") {
    CHECK(cumemctl::format_age(0) == "0 s");
    CHECK(cumemctl::format_age(45.7) == "45 s");
    CHECK(cumemctl::format_age(119) == "119 s");
    CHECK(cumemctl::format_age(720) == "12 min");
    CHECK(cumemctl::format_age(7200) == "2 h");
    CHECK(cumemctl::format_age(5400 * 3) == "4.5 h");
    CHECK(cumemctl::format_age(604800) == "7 days");
    CHECK(cumemctl::format_age(604800 - 1) == "6.9 days");
    CHECK(cumemctl::format_age(34180538) == "395 days");
}
