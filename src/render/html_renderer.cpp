// HtmlRenderer (html_renderer.hpp): --format html, one self-contained page of the report's typed results.
#include "render/html_renderer.hpp"

#include <fmt/format.h>

#include "base/setting.hpp"
#include "fleet/fleet_results.hpp"
#include "matrix/matrix_results.hpp"
#include "render/html_pages.hpp"
#include "report/html_parts.hpp"
#include "util/host.hpp"
#include "util/version.hpp"

namespace cumemctl {
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
    const auto* matrix = report.results_as<matrix::MatrixResults>();
    if (const auto* fleet = report.results_as<fleet::FleetResults>()) {
        html::write_fleet(out, *fleet);
    } else if (matrix != nullptr && matrix->matrix) {
        html::write_matrix(out, *matrix->matrix);
    } else {
        out << "<p>This report has no page of its own; see its JSON (<code>" << setting_name(Setting::json)
            << "</code>).</p>\n";
    }
    out << "</body></html>\n";
}

}  // namespace cumemctl
