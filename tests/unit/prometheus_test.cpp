#include <doctest/doctest.h>

#include <sstream>

#include "fixed_views.hpp"
#include "report/renderer.hpp"

using namespace cumemctl;

namespace {

std::string render(const Report& r) {
    std::ostringstream out;
    PrometheusRenderer{}.render(r, out);
    return out.str();
}

std::size_t occurrences(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

}  // namespace

TEST_CASE("label values escape backslash, quote and newline") {
    CHECK(prometheus_escape(R"(a\b"c)"
                            "\n"
                            "d") == R"(a\\b\"c\nd)");
    CHECK(prometheus_escape("plain") == "plain");
}

TEST_CASE("a family gets HELP and TYPE once and its samples stay together") {
    Report r;
    r.command = "devices";
    FixedViews views;
    views.fixed_metrics = {{"device_capability", "help a", {{"device", "0"}, {"capability", "vmm"}}, 1},
                           {"device_memory_total_bytes", "help b", {{"device", "0"}}, 150109880320.0},
                           {"device_capability", "help a", {{"device", "1"}, {"capability", "vmm"}}, 0}};
    r.set_results(std::move(views));
    const std::string text = render(r);
    CHECK(occurrences(text, "# HELP cumemctl_device_capability help a\n") == 1);
    CHECK(occurrences(text, "# TYPE cumemctl_device_capability gauge\n") == 1);
    CHECK(text.find("cumemctl_device_capability{device=\"0\",capability=\"vmm\"} 1\n"
                    "cumemctl_device_capability{device=\"1\",capability=\"vmm\"} 0\n") != std::string::npos);
    CHECK(text.find("cumemctl_device_memory_total_bytes{device=\"0\"} 150109880320\n") != std::string::npos);
}

TEST_CASE("every report has the envelope gauges, each with the command; the driver version only when it loaded") {
    Report r;
    r.command = "doctor";
    r.exit_code = ExitCode::unavailable;
    std::string text = render(r);
    CHECK(text.find("cumemctl_report_exit_code{command=\"doctor\"} 3\n") != std::string::npos);
    CHECK(text.find("cumemctl_driver_loaded{command=\"doctor\"} 0\n") != std::string::npos);
    CHECK(text.find("cumemctl_driver_cuda_version") == std::string::npos);
    CHECK(text.find("cumemctl_build_info{version=\"" CUMEMCTL_VERSION "\"") != std::string::npos);
    CHECK(text.find("\",command=\"doctor\"} 1\n") != std::string::npos);  // build_info's last label
    r.driver.loaded = true;
    r.driver.version = 13000;
    text = render(r);
    CHECK(text.find("cumemctl_driver_cuda_version{command=\"doctor\"} 13000\n") != std::string::npos);
}

TEST_CASE("values: fractions, special values, and names made valid") {
    Report r;
    FixedViews views;
    views.fixed_metrics = {{"check_duration_seconds", "h", {}, 0.25},
                           {"odd-name", "line one\nline two \\", {{"bad label", "x"}}, -1}};
    r.set_results(std::move(views));
    const std::string text = render(r);
    CHECK(text.find("cumemctl_check_duration_seconds 0.25\n") != std::string::npos);
    CHECK(text.find("# HELP cumemctl_odd_name line one\\nline two \\\\\n") != std::string::npos);
    CHECK(text.find("cumemctl_odd_name{bad_label=\"x\"} -1\n") != std::string::npos);
}
