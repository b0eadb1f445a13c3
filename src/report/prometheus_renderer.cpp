// PrometheusRenderer (renderer.hpp): --format prometheus, the text exposition format for node_exporter.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "report/renderer.hpp"
#include "util/printable.hpp"
#include "util/version.hpp"

namespace cumemctl {
namespace {

constexpr std::string_view kPrefix = "cumemctl_";

// Metric and label names allow [a-zA-Z0-9_] (and ':' in metric names, which we do not use); anything
// else becomes '_', and a leading digit gets a '_' in front.
std::string sanitise_name(std::string_view name) {
    std::string out;
    for (char c : name) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        out += ok ? c : '_';
    }
    if (out.empty() || (out[0] >= '0' && out[0] <= '9')) out.insert(out.begin(), '_');
    return out;
}

// HELP text escapes backslash and newline only.
std::string escape_help(std::string_view text) {
    std::string out;
    for (char c : text) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '\n')
            out += "\\n";
        else
            out += c;
    }
    return out;
}

// Integral values print as integers (bytes, versions); others in the shortest form that reads back.
std::string format_value(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
    if (v == std::floor(v) && std::fabs(v) < 9.007199254740992e15) return fmt::format("{}", static_cast<long long>(v));
    return fmt::format("{}", v);
}

// The gauges every report has, whatever the command, each with the command's label: the textfile
// collector merges every command's file of a node into one scrape, where a series that two files both
// wrote (same name, same labels) would be served once and logged as collected twice on every scrape.
std::vector<Metric> envelope_metrics(const Report& report) {
    const std::pair<std::string, std::string> command{"command", report.command};
    std::vector<Metric> m;
    m.push_back({"build_info",
                 "the cumemctl that wrote these metrics (always 1)",
                 {{"version", std::string(tool_version())}, {"commit", std::string(git_commit())}, command},
                 1});
    m.push_back({"report_exit_code",
                 "the exit code of the command (0 ok, 1 failed, 2 usage, 3 unavailable, 4 permission)",
                 {command},
                 static_cast<double>(report.exit_code)});
    m.push_back({"report_timestamp_seconds",
                 "when the command started, seconds since the Unix epoch",
                 {command},
                 unix_seconds(report.started)});
    m.push_back({"driver_loaded",
                 "whether the CUDA driver library loaded (1) or not (0)",
                 {command},
                 report.driver.loaded ? 1.0 : 0.0});
    if (report.driver.loaded) {
        m.push_back({"driver_cuda_version",
                     "the CUDA version of the driver, as cuDriverGetVersion gives it (13000 is 13.0)",
                     {command},
                     static_cast<double>(report.driver.version)});
    }
    return m;
}

void write_sample(const Metric& m, const std::string& name, std::ostream& out) {
    out << name;
    if (!m.labels.empty()) {
        out << '{';
        for (std::size_t i = 0; i < m.labels.size(); ++i) {
            if (i > 0) out << ',';
            out << sanitise_name(m.labels[i].first) << "=\"" << prometheus_escape(m.labels[i].second) << '"';
        }
        out << '}';
    }
    out << ' ' << format_value(m.value) << '\n';
}

}  // namespace

std::string prometheus_escape(std::string_view value) {
    std::string out;
    for (char c : valid_utf8(value)) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '"')
            out += "\\\"";
        else if (c == '\n')
            out += "\\n";
        else
            out += c;
    }
    return out;
}

void PrometheusRenderer::render(const Report& report, std::ostream& out) const {
    std::vector<const Metric*> all;
    const std::vector<Metric> envelope = envelope_metrics(report);
    for (const auto& m : envelope) all.push_back(&m);
    const std::vector<Metric> own = report.results ? report.results->metrics(report) : std::vector<Metric>{};
    for (const auto& m : own) all.push_back(&m);
    // A family's samples must be written together: group by name in order of first appearance.
    std::vector<std::string> order;
    for (const Metric* m : all) {
        if (std::find(order.begin(), order.end(), m->name) == order.end()) order.push_back(m->name);
    }
    for (const auto& family : order) {
        const std::string name = sanitise_name(std::string(kPrefix) + family);
        bool first = true;
        for (const Metric* m : all) {
            if (m->name != family) continue;
            if (first) {
                out << "# HELP " << name << ' ' << escape_help(m->help) << '\n';
                out << "# TYPE " << name << " gauge\n";
                first = false;
            }
            write_sample(*m, name, out);
        }
    }
}

}  // namespace cumemctl
