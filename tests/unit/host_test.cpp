#include <doctest/doctest.h>

#include <cstdlib>

#include "report/report.hpp"
#include "util/host.hpp"

using namespace cumemctl;

TEST_CASE("UTC timestamps are RFC 3339 with whole seconds") {
    const auto t =
        std::chrono::system_clock::time_point{} + std::chrono::seconds(1795948440) + std::chrono::milliseconds(999);
    CHECK(utc_timestamp(t) == "2026-11-29T10:34:00Z");
    CHECK(unix_seconds(t) == doctest::Approx(1795948440.999));
}

TEST_CASE("the host name comes from CUMEMCTL_HOST when set, and reports carry it") {
    setenv("CUMEMCTL_HOST", "node-17", 1);
    CHECK(host_name() == "node-17");
    Report r;
    const auto j = to_json(r);
    CHECK(j["host"] == "node-17");
    CHECK(j["timestamp"].get<std::string>().size() == 20);
    unsetenv("CUMEMCTL_HOST");
    CHECK_FALSE(host_name().empty());
    CHECK(host_name() != "node-17");
}
