// HtmlRenderer (renderer.hpp): --format html, one self-contained page built from the report's JSON results.
#include <cmath>

#include <fmt/format.h>

#include "report/html_parts.hpp"
#include "report/renderer.hpp"
#include "util/host.hpp"
#include "util/version.hpp"

namespace cumemctl {
namespace html {

std::string escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            case '\'':
                out += "&#39;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

std::string scale_colour(double gbps, double max_gbps) {
    // Three stops: orange (slow), pale yellow, blue (fast); linear between them.
    struct Rgb {
        double r, g, b;
    };
    constexpr Rgb kStops[] = {{253, 174, 97}, {255, 255, 191}, {44, 123, 182}};
    double t = max_gbps > 0 ? gbps / max_gbps : 0;
    t = std::isfinite(t) ? std::fmin(1.0, std::fmax(0.0, t)) : 0.0;
    const int i = t < 0.5 ? 0 : 1;
    const double f = t < 0.5 ? t / 0.5 : (t - 0.5) / 0.5;
    auto mix = [&](double a, double b) { return static_cast<int>(std::lround(a + (b - a) * f)); };
    return fmt::format("#{:02x}{:02x}{:02x}", mix(kStops[i].r, kStops[i + 1].r), mix(kStops[i].g, kStops[i + 1].g),
                       mix(kStops[i].b, kStops[i + 1].b));
}

}  // namespace html

namespace {

constexpr const char* kStyle = R"(body{font-family:sans-serif;margin:1.5em;color:#222;max-width:1400px}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f2f2f2}.status{display:inline-block;padding:.3em .8em;margin:.2em;border-radius:.3em;font-weight:bold}
.pass{background:#d9f0d3}.warn,.busy{background:#fee8a0}.fail,.error,.timeout,.missing,.stale{background:#f4a6a6}
.unknown,.skip{background:#e5e5e5}
.note{color:#555}code{background:#f5f5f5;padding:0 .2em}svg text{font-family:sans-serif})";

}  // namespace

void HtmlRenderer::render(const Report& report, std::ostream& out) const {
    const std::string title =
        fmt::format("cumemctl {}{}", report.command, report.host.empty() ? "" : " on " + report.host);
    out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" << html::escape(title)
        << "</title>\n<style>" << kStyle << "</style></head>\n<body>\n<h1>" << html::escape(title) << "</h1>\n";
    out << "<p class=\"note\">" << html::escape(utc_timestamp(report.started)) << " &middot; cumemctl "
        << html::escape(tool_version()) << " &middot; exit " << static_cast<int>(report.exit_code) << "</p>\n";
    for (const auto& e : report.errors) {
        out << "<p class=\"status fail\">error: " << html::escape(e.message) << "</p>\n";
    }
    const nlohmann::json& r = report.json_results;
    if (report.command == "fleet" && r.is_object()) {
        html::write_fleet(out, r, node_statuses_);
    } else if (r.is_object() && r.contains("matrix") && r["matrix"].is_object()) {
        html::write_matrix(out, r["matrix"]);
    } else {
        out << "<p>This report has no page of its own; see its JSON (<code>--json</code>).</p>\n";
    }
    out << "</body></html>\n";
}

}  // namespace cumemctl
