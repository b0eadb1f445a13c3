// CUMEMCTL_TIMING's lines, and the time since exec that the first one reports.
#include <doctest/doctest.h>
#include <unistd.h>

#include <fmt/format.h>

#include "util/phase_timing.hpp"

using namespace cumemctl;

TEST_CASE("a phase line names the process, the phase, its time and the time since exec") {
    const int pid = static_cast<int>(getpid());
    CHECK(phase_line("cuInit", 167.25, 310.0) ==
          fmt::format("cumemctl[{}]: timing cuInit +167.2 ms (since exec: 310.0 ms)\n", pid));
    CHECK(phase_line("parse", 0.5, -1) == fmt::format("cumemctl[{}]: timing parse +0.5 ms\n", pid));
}

TEST_CASE("the time since exec is known from /proc and grows") {
    const double first = ms_since_exec();
    REQUIRE(first >= 0);
    usleep(30000);
    // /proc's start time is in clock ticks (10 ms): the difference is 30 ms within that.
    const double second = ms_since_exec();
    CHECK(second - first >= 29);
    CHECK(second - first < 1000);
}
