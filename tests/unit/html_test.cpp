#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "report/html_parts.hpp"
#include "report/renderer.hpp"

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
    auto cell = [](int peer, const char* status, double gbps) {
        nlohmann::json c{{"peer", peer}, {"status", status}, {"diagnosis", ""}, {"gbps", gbps}, {"problem", nullptr}};
        if (std::string(status) == "fail") {
            c["diagnosis"] = "imex-domain";
            c["gbps"] = nullptr;
            c["problem"] = {{"message", "<refused> & more"}, {"remedy", "check IMEX"}};
        }
        return c;
    };
    r.json_results["matrix"] = {
        {"run", "r1"},
        {"ranks", 2},
        {"failed_pairs", 1},
        {"rank_info",
         {{{"rank", 0}, {"host", "node-b"}, {"device", 0}, {"gpu_uuid", "GPU-0"}, {"state", "ok"}},
          {{"rank", 1}, {"host", "node-a"}, {"device", 0}, {"gpu_uuid", "GPU-1"}, {"state", "ok"}}}},
        {"cells", {{cell(0, "pass", 100), cell(1, "pass", 50)}, {cell(0, "fail", 0), cell(1, "pass", 100)}}}};
    return r;
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
    Report r;
    r.command = "fleet";
    r.json_results = {
        {"node_count", 5},
        {"reports", 5},
        {"statuses", {{"pass", 2}, {"fail", 1}, {"busy", 1}, {"stale", 1}}},
        {"nodes",
         {{{"host", "gpu01"}, {"status", "pass"}},
          {{"host", "gpu02"}, {"status", "pass"}},
          {{"host", "gpu04"}, {"status", "busy"}},
          {{"host", "gpu05"}, {"status", "stale"}},
          {{"host", "gpu03"},
           {"status", "fail"},
           {"gpu_health", {{{"device", 2}, {"uuid", "GPU-3"}, {"status", "fail"}, {"reason", "remap failed"}}}}}}},
        {"checks",
         {{{"check", "memory-health"}, {"fail", {"gpu03"}}, {"warn", nlohmann::json::array()}, {"remedy", "RMA"}}}},
        {"differences", nlohmann::json::array()}};
    std::ostringstream out;
    HtmlRenderer{{"fail", "stale", "busy", "pass"}}.render(r, out);
    const std::string page = out.str();
    CHECK(page.find("data-status=\"fail\" data-count=\"1\"") != std::string::npos);
    // Every status fleet counts, in the order given, worst first.
    const auto at = [&](const char* text) { return page.find(text); };
    CHECK(at("data-status=\"fail\"") < at("data-status=\"stale\""));
    CHECK(at("data-status=\"stale\"") < at("data-status=\"busy\""));
    CHECK(at("data-status=\"busy\" data-count=\"1\"") < at("data-status=\"pass\" data-count=\"2\""));
    CHECK(at("<td class=\"stale\">stale</td><td>1: gpu05</td>") < at("<td class=\"busy\">busy</td><td>1: gpu04</td>"));
    CHECK(page.find("2: gpu[01-02]") != std::string::npos);
    CHECK(page.find("remap failed") != std::string::npos);
    CHECK(page.find("<td>RMA</td>") != std::string::npos);
}
