#include <doctest/doctest.h>

#include "base/error.hpp"
#include "util/size.hpp"

using namespace cumemctl;

namespace {
ExitCode code_of(const char* text) {
    try {
        parse_size(text);
    } catch (const Error& e) {
        return e.exit_code();
    }
    return ExitCode::ok;
}
}  // namespace

TEST_CASE("parse_size reads bytes and binary and decimal units") {
    CHECK(parse_size("4096") == 4096);
    CHECK(parse_size("0") == 0);
    CHECK(parse_size("2MiB") == 2ULL << 20);
    CHECK(parse_size("2M") == 2ULL << 20);
    CHECK(parse_size("1G") == 1ULL << 30);
    CHECK(parse_size("1.5GiB") == 3ULL << 29);
    CHECK(parse_size("10GB") == 10'000'000'000ULL);
    CHECK(parse_size("1kB") == 1000);
    CHECK(parse_size("64 KiB") == 65536);
    CHECK(parse_size("1TiB") == 1ULL << 40);
    CHECK(parse_size("18446744073709551615") == 18446744073709551615ULL);
}

TEST_CASE("parse_size refuses what is not a whole number of bytes") {
    for (std::string bad : {"", "-1", "x", "1.5", "1.3B", "1Gb", "1gb", "2 MiBs", "18446744073709551616", "16777216T",
                            "1e9", ".", "0x10"}) {
        CAPTURE(bad);
        CHECK(code_of(bad.c_str()) == ExitCode::usage);
    }
}

TEST_CASE("format_size prints exact multiples without decimals") {
    CHECK(format_size(0) == "0 B");
    CHECK(format_size(12345) == "12.06 KiB");
    CHECK(format_size(2ULL << 20) == "2 MiB");
    CHECK(format_size(3ULL << 29) == "1.50 GiB");
    CHECK(format_size(1023) == "1023 B");
}

TEST_CASE("round_up and round_down") {
    CHECK(round_up(12345, 2ULL << 20) == 2ULL << 20);
    CHECK(round_up(2ULL << 20, 2ULL << 20) == 2ULL << 20);
    CHECK(round_down(12345, 4096) == 12288);
    CHECK_THROWS_AS(round_up(~0ULL, 4096), Error);
}
