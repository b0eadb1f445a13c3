#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "fleet/fleet_results.hpp"
#include "matrix/matrix_results.hpp"
#include "render/html_renderer.hpp"
#include "report/html_parts.hpp"

using namespace cumemctl;

namespace {

std::size_t count(const std::string& text, const std::string& part) {
    std::size_t n = 0;
    for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++n;
    return n;
}

// A fabric-matrix report of two ranks on two nodes: rank 1 cannot read rank 0.
Report matrix_report() {
    Report r;
    r.command = "fabric-matrix";
    auto cell = [](int peer, CheckStatus status, double gbps) {
        matrix::Cell c;
        c.peer = peer;
        c.status = status;
        c.diagnosis = "";
        c.gbps = gbps;
        if (status == CheckStatus::fail) {
            c.diagnosis = "imex-domain";
            c.gbps = std::nullopt;
            c.problem = std::make_shared<const Problem>(Problem{.message = "<refused> & more", .remedy = "check IMEX"});
        }
        return c;
    };
    auto rank = [](int n, const char* host, const char* uuid) {
        return matrix::RankInfo{.rank = n,
                                .host = host,
                                .device = 0,
                                .uuid = uuid,
                                .pci_bus_id = {},
                                .nvml_index = {},
                                .state = matrix::RankState::ok};
    };
    matrix::MatrixResults results;
    results.mode = matrix::MatrixResults::Summary{"r1", "/tmp/r1"};
    results.matrix = matrix::Matrix{.run = "r1",
                                    .ranks = 2,
                                    .info = {rank(0, "node-b", "GPU-0"), rank(1, "node-a", "GPU-1")},
                                    .cells = {{cell(0, CheckStatus::pass, 100), cell(1, CheckStatus::pass, 50)},
                                              {cell(0, CheckStatus::fail, 0), cell(1, CheckStatus::pass, 100)}},
                                    .failed_pairs = 1};
    r.set_results(std::move(results));
    return r;
}

fleet::NodeSummary node(const char* host, fleet::NodeStatus status) {
    fleet::NodeSummary n;
    n.host = host;
    n.status = status;
    return n;
}

}  // namespace

TEST_CASE("HTML text is escaped") {
    CHECK(html::escape("<a href=\"x\">&'</a>") == "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
}

TEST_CASE("the heat map's scale runs from orange through yellow to blue") {
    CHECK(html::scale_colour(0, 100) == "#fdae61");
    CHECK(html::scale_colour(50, 100) == "#ffffbf");
    CHECK(html::scale_colour(100, 100) == "#2c7bb6");
    CHECK(html::scale_colour(500, 100) == "#2c7bb6");  // clamped
    CHECK(html::scale_colour(1, 0) == "#fdae61");      // no scale: the low end
}

TEST_CASE("a fabric-matrix page has one cell per pair, grouped by node, and the failing pair's diagnosis") {
    std::ostringstream out;
    HtmlRenderer{}.render(matrix_report(), out);
    const std::string page = out.str();
    CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
    CHECK(count(page, "<rect class=\"cell ") == 4);
    CHECK(count(page, "<rect class=\"cell fail\"") == 1);
    CHECK(page.find(std::string("fill=\"") + html::kFailColour + "\" data-reader=\"1\" data-owner=\"0\"") !=
          std::string::npos);
    // Rows by node: node-a's rank 1 first, at the top left.
    CHECK(page.find("x=\"150\" y=\"120\" width=\"28\" height=\"28\" fill=\"#2c7bb6\" data-reader=\"1\" "
                    "data-owner=\"1\"") != std::string::npos);
    CHECK(page.find("&lt;refused&gt; &amp; more") != std::string::npos);
    CHECK(page.find("<script") == std::string::npos);
    CHECK(page.find("http://") == page.find("http://www.w3.org/2000/svg"));  // nothing fetched
    CHECK(page.find("Slowest pairs") != std::string::npos);
}

TEST_CASE("a fleet page counts the statuses and names the nodes as host lists") {
    using fleet::NodeStatus;
    fleet::FleetResults results;
    fleet::FleetSummary& s = results.summary;
    s.reports = 5;
    s.nodes = {node("gpu01", NodeStatus::pass), node("gpu02", NodeStatus::pass), node("gpu04", NodeStatus::busy),
               node("gpu05", NodeStatus::stale), node("gpu03", NodeStatus::fail)};
    s.nodes.back().gpu_health = {
        fleet::GpuHealth{.device = 2, .uuid = "GPU-3", .status = CheckStatus::fail, .reason = "remap failed"}};
    s.checks = {fleet::CheckSpread{.check = "memory-health", .failing = {"gpu03"}, .warning = {}, .remedy = "RMA"}};
    Report r;
    r.command = "fleet";
    r.set_results(std::move(results));
    std::ostringstream out;
    HtmlRenderer{}.render(r, out);
    const std::string page = out.str();
    CHECK(page.find("data-status=\"fail\" data-count=\"1\"") != std::string::npos);
    // Every status fleet counts, worst first.
    const auto at = [&](const char* text) { return page.find(text); };
    CHECK(at("data-status=\"fail\"") < at("data-status=\"stale\""));
    CHECK(at("data-status=\"stale\"") < at("data-status=\"busy\""));
    CHECK(at("data-status=\"busy\" data-count=\"1\"") < at("data-status=\"pass\" data-count=\"2\""));
    CHECK(at("<td class=\"stale\">stale</td><td>1: gpu05</td>") < at("<td class=\"busy\">busy</td><td>1: gpu04</td>"));
    CHECK(page.find("2: gpu[01-02]") != std::string::npos);
    CHECK(page.find("remap failed") != std::string::npos);
    CHECK(page.find("<td>RMA</td>") != std::string::npos);
}
