// doctor's report as JUnit XML, the test report that GitLab, Jenkins and GitHub's runners show (man
// cumemctl-doctor, "CI SYSTEMS"; the shape that tests/junit/junit.xsd describes).
#include <optional>
#include <string>

#include <fmt/format.h>

#include "cuda/driver_info.hpp"
#include "doctor/check.hpp"
#include "doctor/renderers.hpp"
#include "report/gpu_name.hpp"
#include "report/html_parts.hpp"
#include "report/json_fields.hpp"
#include "util/host.hpp"

namespace cumemctl::doctor {
namespace {

using nlohmann::json;

// Text for an XML attribute or element: cumemctl::html::escape's five entities (each as valid in XML), tabs and
// newlines kept (as references in attributes), other control characters (which XML 1.0 cannot hold)
// as '?'.
std::string xml(std::string_view text, bool attribute) {
    std::string out;
    for (const char c : cumemctl::html::escape(text)) {
        if (c == '\n' || c == '\t') {
            out += attribute ? (c == '\n' ? "&#10;" : "&#9;") : std::string(1, c);
        } else {
            out += static_cast<unsigned char>(c) < 0x20 ? '?' : c;
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
std::string detail_text(const json& c) {
    std::string text = json_text(c, "reason");
    if (const std::string remedy = json_text(c, "remedy"); !remedy.empty()) text += "\nremedy: " + remedy;
    if (const json& call = json_field(c, "driver_call"); call.is_object()) text += "\ndriver call: " + call.dump();
    return text;
}

struct Counts {
    int tests = 0, failures = 0, errors = 0, skipped = 0;
};

// One check's testcase, counted in `n`.
std::string check_case(const json& c, Counts& n) {
    const std::string check = json_text(c, "check", "?");
    const std::optional<CheckStatus> parsed = parse_status(json_text(c, "status"));
    const json& device = json_field(c, "device");
    // The GPU as nvidia-smi numbers it (gpu_name), as the drain reason and fleet name it.
    const json& index = json_field(c, "nvml_index");
    const std::string name =
        device.is_number_integer()
            ? fmt::format(
                  "{} {}", check,
                  gpu_name(index.is_number_unsigned() ? std::optional<unsigned>(index.get<unsigned>()) : std::nullopt,
                           json_text(c, "pci_bus_id"), device.get<int>()))
            : check;
    ++n.tests;
    std::string out = fmt::format("    <testcase name=\"{}\" classname=\"cumemctl.doctor.{}\" time=\"{:.6f}\"",
                                  attr(name), attr(check), json_number(c, "seconds"));
    const std::string reason = json_text(c, "reason");
    if (!parsed) {
        // Never a pass: a verdict that cannot be read is an error of the run.
        ++n.errors;
        return out +
               fmt::format(">\n      <error message=\"{}\" type=\"unreadable status\">{}</error>\n    </testcase>\n",
                           attr(fmt::format("status '{}' is none of doctor's", json_text(c, "status"))),
                           body(detail_text(c)));
    }
    const CheckStatus status = *parsed;
    if (status_fails(status)) {
        ++n.failures;
        return out + fmt::format(">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>\n",
                                 attr(reason), status_name(status), body(detail_text(c)));
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
                           attr("busy: " + reason), body("busy: " + detail_text(c)));
    }
    const std::string said = status == CheckStatus::warn ? "warning: " + detail_text(c) : reason;
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
    const json& r = report.json_results;
    const json& listed = json_field(r, "checks");
    const json checks = listed.is_array() ? listed : json::array();
    Counts n;
    std::string cases;
    for (const auto& c : checks) cases += check_case(c, n);
    if (checks.empty() || !report.driver.loaded) cases += error_cases(report, n);
    const double seconds = json_number(r, "seconds");
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
    property("level", json_text(r, "level", "full"));
    property("status", json_text(r, "status", report.errors.empty() ? "" : "error"));
    property("driver", report.driver.loaded ? cuda_version_string(report.driver.version) : "none");
    property("exit_code", std::to_string(static_cast<int>(report.exit_code)));
    out << "    </properties>\n" << cases << "  </testsuite>\n</testsuites>\n";
}

}  // namespace cumemctl::doctor
