// doctor's status type: its names parsed back, its one order, and the whole run's status derived from it.
#include <doctest/doctest.h>

#include <sstream>

#include "doctor/check.hpp"
#include "doctor/doctor_results.hpp"
#include "doctor/renderers.hpp"
#include "doctor/runner.hpp"

using namespace cumemctl::doctor;

namespace {

constexpr CheckStatus kAll[] = {CheckStatus::pass, CheckStatus::warn, CheckStatus::fail,
                                CheckStatus::skip, CheckStatus::busy, CheckStatus::timeout};

std::array<int, kStatusCount> counted(std::initializer_list<CheckStatus> statuses) {
    std::array<int, kStatusCount> counts{};
    for (const CheckStatus s : statuses) ++counts[static_cast<std::size_t>(s)];
    return counts;
}

}  // namespace

TEST_CASE("every status's name parses back to it, and nothing else parses") {
    for (const CheckStatus s : kAll) CHECK(parse_status(status_name(s)) == s);
    CHECK_FALSE(parse_status("").has_value());
    CHECK_FALSE(parse_status("PASS").has_value());
    CHECK_FALSE(parse_status("stale").has_value());
    CHECK_FALSE(parse_status("failed").has_value());
}

TEST_CASE("the order: skip, pass, warn, busy, timeout, fail, and worst first is its reverse") {
    CHECK(status_severity(CheckStatus::skip) < status_severity(CheckStatus::pass));
    CHECK(status_severity(CheckStatus::pass) < status_severity(CheckStatus::warn));
    CHECK(status_severity(CheckStatus::warn) < status_severity(CheckStatus::busy));
    CHECK(status_severity(CheckStatus::busy) < status_severity(CheckStatus::timeout));
    CHECK(status_severity(CheckStatus::timeout) < status_severity(CheckStatus::fail));
    const auto& worst_first = statuses_worst_first();
    CHECK(worst_first.front() == CheckStatus::fail);
    CHECK(worst_first.back() == CheckStatus::skip);
    for (std::size_t i = 1; i < worst_first.size(); ++i)
        CHECK(status_severity(worst_first[i - 1]) > status_severity(worst_first[i]));
}

TEST_CASE("fail and timeout are evidence of a broken node; busy and warn are not") {
    CHECK(status_fails(CheckStatus::fail));
    CHECK(status_fails(CheckStatus::timeout));
    CHECK_FALSE(status_fails(CheckStatus::busy));
    CHECK_FALSE(status_fails(CheckStatus::warn));
    CHECK_FALSE(status_fails(CheckStatus::pass));
    CHECK_FALSE(status_fails(CheckStatus::skip));
}

TEST_CASE("the run's status is its worst result's, and skips alone pass") {
    CHECK(run_status(counted({})) == CheckStatus::pass);
    CHECK(run_status(counted({CheckStatus::skip, CheckStatus::skip})) == CheckStatus::pass);
    CHECK(run_status(counted({CheckStatus::pass, CheckStatus::skip, CheckStatus::warn})) == CheckStatus::warn);
    CHECK(run_status(counted({CheckStatus::warn, CheckStatus::busy})) == CheckStatus::busy);
    CHECK(run_status(counted({CheckStatus::busy, CheckStatus::timeout, CheckStatus::warn})) == CheckStatus::timeout);
    CHECK(run_status(counted({CheckStatus::timeout, CheckStatus::fail, CheckStatus::pass})) == CheckStatus::fail);
}

TEST_CASE("JUnit writes each check's typed verdict: a failure as a failure, a pass as a pass") {
    cumemctl::Report report;
    report.command = "doctor";
    report.driver.loaded = true;
    cumemctl::doctor::DoctorRun run;
    run.results.push_back({"vmm", std::nullopt, CheckOutcome::pass("fine"), 0.5});
    run.results.push_back({"context", std::nullopt, CheckOutcome::fail("no context", "reboot"), 0.25});
    report.set_results(cumemctl::doctor::DoctorResults(run));
    std::ostringstream out;
    JunitRenderer{}.render(report, out);
    const std::string xml = out.str();
    CHECK(xml.find("tests=\"2\" failures=\"1\" errors=\"0\" skipped=\"0\"") != std::string::npos);
    CHECK(xml.find("<property name=\"status\" value=\"fail\"/>") != std::string::npos);
    CHECK(xml.find("<failure message=\"no context\" type=\"fail\">no context\nremedy: reboot</failure>") !=
          std::string::npos);
    CHECK(xml.find("<system-out>fine</system-out>") != std::string::npos);
}
