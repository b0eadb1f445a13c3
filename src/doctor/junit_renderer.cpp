// doctor's report as JUnit XML, the test report that GitLab, Jenkins and GitHub's runners show (man
// cumemctl-doctor, "CI SYSTEMS"; the shape that tests/junit/junit.xsd describes).
#include <optional>
#include <string>

#include <fmt/format.h>

#include "cuda/driver_info.hpp"
#include "doctor/check.hpp"
#include "doctor/doctor_results.hpp"
#include "doctor/renderers.hpp"
#include "report/gpu_name.hpp"
#include "report/html_parts.hpp"
#include "util/host.hpp"
#include "report/driver_call_json.hpp"

namespace cumemctl::doctor {
namespace {

// Text for an XML attribute or element, well-formed XML 1.0 whatever bytes it holds: cumemctl::html::escape
// writes out every character XML 1.0 forbids and each byte that is not UTF-8; tab and newline stay, as
// character references in attributes (where a parser would fold them into spaces).
std::string xml(std::string_view text, bool attribute) {
    std::string out;
    for (const char c : cumemctl::html::escape(text)) {
        if (attribute && (c == '\n' || c == '\t')) {
            out += c == '\n' ? "&#10;" : "&#9;";
        } else {
            out += c;
        }
    }
    return out;
}

std::string attr(std::string_view text) {
    return xml(text, true);
}
std::string body(std::string_view text) {
    return xml(text, false);
}

// The JUnit timestamp: ISO 8601 without a zone (Jenkins' schema), in UTC.
std::string junit_timestamp(std::chrono::system_clock::time_point when) {
    std::string t = utc_timestamp(when);
    if (!t.empty() && t.back() == 'Z') t.pop_back();
    return t;
}

// What a failed or busy check says beyond its reason: the remedy and the driver call.
std::string detail_text(const CheckOutcome& o) {
    std::string text = o.reason;
    if (!o.remedy.empty()) text += "\nremedy: " + o.remedy;
    if (o.driver) text += "\ndriver call: " + driver_call_json_text(*o.driver);
    return text;
}

struct Counts {
    int tests = 0, failures = 0, errors = 0, skipped = 0;
};

// One check's testcase, counted in `n`.
std::string check_case(const DoctorRun& run, const CheckResult& c, Counts& n) {
    // The GPU as nvidia-smi numbers it (gpu_name), as the drain reason and fleet name it.
    std::string name = c.check;
    if (c.device) {
        const gpu::DeviceIdentity id = identity_of(run, *c.device);
        name = fmt::format("{} {}", c.check, gpu_name(id.nvml_index, id.pci_bus_id, *c.device));
    }
    ++n.tests;
    std::string out = fmt::format("    <testcase name=\"{}\" classname=\"cumemctl.doctor.{}\" time=\"{:.6f}\"",
                                  attr(name), attr(c.check), c.seconds);
    const std::string& reason = c.outcome.reason;
    const CheckStatus status = c.outcome.status;
    if (status_fails(status)) {
        ++n.failures;
        return out + fmt::format(">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>\n",
                                 attr(reason), status_name(status), body(detail_text(c.outcome)));
    }
    if (status == CheckStatus::skip) {
        ++n.skipped;
        return out + fmt::format(">\n      <skipped message=\"{}\"/>\n    </testcase>\n", attr(reason));
    }
    if (status == CheckStatus::busy) {
        // Not judged: other processes hold the GPU (the reason names them).
        ++n.skipped;
        return out +
               fmt::format(">\n      <skipped message=\"{}\"/>\n      <system-out>{}</system-out>\n    </testcase>\n",
                           attr("busy: " + reason), body("busy: " + detail_text(c.outcome)));
    }
    const std::string said = status == CheckStatus::warn ? "warning: " + detail_text(c.outcome) : reason;
    return out + fmt::format(">\n      <system-out>{}</system-out>\n    </testcase>\n", body(said));
}

// An error that no check reports (no driver, a device that does not exist): a testcase of its own each.
std::string error_cases(const Report& report, Counts& n) {
    std::string cases;
    for (const auto& e : report.errors) {
        ++n.tests, ++n.errors;
        std::string text = e.message;
        if (!e.remedy.empty()) text += "\nremedy: " + e.remedy;
        cases += fmt::format(
            "    <testcase name=\"doctor\" classname=\"cumemctl.doctor\" time=\"0\">\n      <error message=\"{}\" "
            "type=\"exit {}\">{}</error>\n    </testcase>\n",
            attr(e.message), static_cast<int>(e.exit_code), body(text));
    }
    return cases;
}

}  // namespace

void JunitRenderer::render(const Report& report, std::ostream& out) const {
    const auto* results = report.results_as<DoctorResults>();
    Counts n;
    std::string cases;
    if (results != nullptr) {
        for (const CheckResult& c : results->run().results) cases += check_case(results->run(), c, n);
    }
    if (n.tests == 0 || !report.driver.loaded) cases += error_cases(report, n);
    const double seconds = results != nullptr ? results->run().seconds : 0;
    const std::string suite = "cumemctl doctor " + report.host;
    out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    out << fmt::format(
        "<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.6f}\">\n",
        attr(suite), n.tests, n.failures, n.errors, n.skipped, seconds);
    out << fmt::format(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.6f}\" "
        "timestamp=\"{}\" hostname=\"{}\">\n",
        attr(suite), n.tests, n.failures, n.errors, n.skipped, seconds, junit_timestamp(report.started),
        attr(report.host));
    out << "    <properties>\n";
    const auto property = [&](std::string_view name, const std::string& value) {
        out << fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", name, attr(value));
    };
    property("level", results != nullptr && results->run().quick ? "quick" : "full");
    property("status", results != nullptr      ? std::string(status_name(results->status()))
                       : report.errors.empty() ? ""
                                               : "error");
    property("driver", report.driver.loaded ? cuda_version_string(report.driver.version) : "none");
    property("exit_code", std::to_string(static_cast<int>(report.exit_code)));
    out << "    </properties>\n" << cases << "  </testsuite>\n</testsuites>\n";
}

}  // namespace cumemctl::doctor
