// The fabric-matrix page: an SVG heat map with one cell per (reader, owner) pair, rows and columns
// grouped by node, then GPU; the legend; the failing pairs and the slowest pairs against the median.
#include <algorithm>
#include <numeric>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "render/html_pages.hpp"
#include "report/html_parts.hpp"

namespace cumemctl::html {
namespace {

// One rank as the page names it.
struct RankView {
    int rank = 0;
    std::string host;  // "?" where it never came
    int device = -1;
    std::string uuid;
};

std::vector<RankView> ranks_of(const matrix::Matrix& m) {
    std::vector<RankView> out;
    for (const auto& r : m.info) out.push_back(RankView{r.rank, r.host.empty() ? "?" : r.host, r.device, r.uuid});
    return out;
}

std::string describe(const RankView& r) {
    return fmt::format("rank {} ({} GPU {}{})", r.rank, r.host,
                       r.device < 0 ? std::string("?") : std::to_string(r.device), r.uuid.empty() ? "" : " " + r.uuid);
}

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The node groups of an order of ranks: [first, end) index ranges with one host each.
std::vector<std::pair<std::size_t, std::size_t>> node_groups(const std::vector<RankView>& order) {
    std::vector<std::pair<std::size_t, std::size_t>> groups;
    for (std::size_t i = 0; i < order.size(); ++i) {
        if (groups.empty() || order[groups.back().first].host != order[i].host) groups.emplace_back(i, i + 1);
        groups.back().second = i + 1;
    }
    return groups;
}

void write_legend(std::ostream& out, double max_gbps, int x, int y) {
    out << fmt::format(
        "<g class=\"legend\"><defs><linearGradient id=\"scale\" x1=\"0\" x2=\"1\" y1=\"0\" y2=\"0\">"
        "<stop offset=\"0\" stop-color=\"{}\"/><stop offset=\"0.5\" stop-color=\"{}\"/>"
        "<stop offset=\"1\" stop-color=\"{}\"/></linearGradient></defs>"
        "<rect x=\"{}\" y=\"{}\" width=\"240\" height=\"14\" fill=\"url(#scale)\" stroke=\"#888\"/>"
        "<text x=\"{}\" y=\"{}\" font-size=\"11\">0</text>"
        "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"end\">{:.1f} GB/s</text>"
        "<rect class=\"legend-fail\" x=\"{}\" y=\"{}\" width=\"14\" height=\"14\" fill=\"{}\"/>"
        "<text x=\"{}\" y=\"{}\" font-size=\"11\">failed</text>"
        "<rect class=\"legend-missing\" x=\"{}\" y=\"{}\" width=\"14\" height=\"14\" fill=\"{}\"/>"
        "<text x=\"{}\" y=\"{}\" font-size=\"11\">no measurement</text></g>\n",
        scale_colour(0, 1), scale_colour(0.5, 1), scale_colour(1, 1), x, y, x, y + 27, x + 240, y + 27, max_gbps,
        x + 260, y, kFailColour, x + 278, y + 11, x + 330, y, kMissingColour, x + 348, y + 11);
}

// One (reader, owner) pair as the page draws it: a cell that did not pass, or no cell at all
// ("missing"), is a failure.
struct CellView {
    bool passed = false;
    std::optional<double> gbps;
    std::string diagnosis = "missing";
    std::optional<std::string> message;  // the failure's problem, where it has one
    std::string remedy;
};

// A run's matrix as the page draws it.
struct MatrixView {
    std::vector<RankView> ranks;               // in rank order
    std::vector<std::size_t> order;            // the ranks' places by node, then GPU, then rank
    std::vector<RankView> ordered;             // ranks in that order
    std::vector<std::vector<CellView>> cells;  // [reader][owner], in rank order
    std::vector<double> speeds;                // every passing pair's GB/s
    double max_gbps = 0;
    double median_gbps = 0;
    int failed = 0;
};

CellView cell_view(const matrix::Cell& c) {
    CellView v;
    v.passed = c.passed();
    v.gbps = c.gbps;
    v.diagnosis = c.diagnosis;
    if (c.problem) {
        v.message = c.problem->message;
        v.remedy = c.problem->remedy;
    }
    return v;
}

MatrixView view_of(const matrix::Matrix& m) {
    MatrixView v;
    v.ranks = ranks_of(m);
    const std::size_t n = v.ranks.size();
    // Rows and columns by node, then GPU, so that a node (or a tray of them) shows as a band.
    v.order.resize(n);
    std::iota(v.order.begin(), v.order.end(), 0);
    std::stable_sort(v.order.begin(), v.order.end(), [&](std::size_t a, std::size_t b) {
        return std::tie(v.ranks[a].host, v.ranks[a].device, v.ranks[a].rank) <
               std::tie(v.ranks[b].host, v.ranks[b].device, v.ranks[b].rank);
    });
    for (std::size_t i : v.order) v.ordered.push_back(v.ranks[i]);
    const auto& rows = m.cells;
    v.cells.assign(n, std::vector<CellView>(n));
    for (std::size_t i = 0; i < n && i < rows.size(); ++i) {
        for (std::size_t j = 0; j < n && j < rows[i].size(); ++j) {
            v.cells[i][j] = cell_view(rows[i][j]);
            if (v.cells[i][j].passed && v.cells[i][j].gbps) v.speeds.push_back(*v.cells[i][j].gbps);
        }
    }
    v.max_gbps = v.speeds.empty() ? 0 : *std::max_element(v.speeds.begin(), v.speeds.end());
    v.median_gbps = median(v.speeds);
    v.failed = m.failed_pairs;
    return v;
}

// The heat map's geometry: cells of `cell` pixels from (left, top).
struct Grid {
    int cell = 28;
    int left = 150;
    int top = 120;
    int side = 0;
};

void write_cells(std::ostream& out, const MatrixView& v, const Grid& g) {
    const std::size_t n = v.ranks.size();
    for (std::size_t y = 0; y < n; ++y) {
        const RankView& reader = v.ordered[y];
        for (std::size_t x = 0; x < n; ++x) {
            const RankView& owner = v.ordered[x];
            const CellView& c = v.cells[v.order[y]][v.order[x]];
            std::string fill, klass, what;
            if (c.passed && c.gbps) {
                fill = scale_colour(*c.gbps, v.max_gbps);
                klass = "pass";
                what = fmt::format("{:.1f} GB/s", *c.gbps);
            } else if (c.passed) {
                fill = kMissingColour;
                klass = "pass nodata";
                what = "passed, no measurement";
            } else {
                fill = kFailColour;
                klass = "fail";
                what = fmt::format("failed: {}{}", c.diagnosis.empty() ? "?" : c.diagnosis,
                                   c.message ? ": " + *c.message : "");
            }
            out << fmt::format(
                "<rect class=\"cell {}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" "
                "data-reader=\"{}\" data-owner=\"{}\" data-gbps=\"{}\" data-diagnosis=\"{}\">"
                "<title>{} reads {}: {}</title></rect>\n",
                klass, g.left + static_cast<int>(x) * g.cell, g.top + static_cast<int>(y) * g.cell, g.cell, g.cell,
                fill, reader.rank, owner.rank, c.gbps ? fmt::format("{:.3f}", *c.gbps) : "", escape(c.diagnosis),
                escape(describe(reader)), escape(describe(owner)), escape(what));
        }
    }
}

// GPU numbers beside each row and column where the cells have room for them; then node bands: a line
// between nodes, the node's name on both axes.
void write_axis_labels(std::ostream& out, const MatrixView& v, const Grid& g) {
    const bool gpu_labels = g.cell >= 14;
    for (std::size_t i = 0; gpu_labels && i < v.ordered.size(); ++i) {
        const int at = static_cast<int>(i) * g.cell + g.cell / 2;
        const std::string gpu = v.ordered[i].device < 0 ? "?" : std::to_string(v.ordered[i].device);
        out << fmt::format(
            "<text class=\"gpu-label\" x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"end\" "
            "dominant-baseline=\"middle\">{}</text><text class=\"gpu-label\" x=\"{}\" y=\"{}\" "
            "font-size=\"10\" text-anchor=\"middle\">{}</text>\n",
            g.left - 4, g.top + at, gpu, g.left + at, g.top - 4, gpu);
    }
    const int offset = gpu_labels ? 18 : 4;
    for (const auto& [first, end] : node_groups(v.ordered)) {
        const int a = static_cast<int>(first) * g.cell, b = static_cast<int>(end) * g.cell;
        const std::string host = escape(v.ordered[first].host);
        out << fmt::format(
            "<text class=\"node-label\" x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"end\" "
            "dominant-baseline=\"middle\">{}</text>\n",
            g.left - offset, g.top + (a + b) / 2, host);
        out << fmt::format(
            "<text class=\"node-label\" x=\"{0}\" y=\"{1}\" font-size=\"12\" "
            "transform=\"rotate(-60 {0} {1})\">{2}</text>\n",
            g.left + (a + b) / 2, g.top - offset, host);
        if (first > 0) {
            out << fmt::format(
                "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#000\" stroke-width=\"1\"/>"
                "<line x1=\"{3}\" y1=\"{4}\" x2=\"{3}\" y2=\"{5}\" stroke=\"#000\" stroke-width=\"1\"/>\n",
                g.left, g.top + a, g.left + g.side, g.left + a, g.top, g.top + g.side);
        }
    }
}

void write_heatmap(std::ostream& out, const MatrixView& v) {
    const std::size_t n = v.ranks.size();
    Grid g;
    g.cell = static_cast<int>(std::clamp<std::size_t>(n == 0 ? 28 : 720 / n, 6, 28));
    g.side = static_cast<int>(n) * g.cell;
    out << fmt::format(
        "<svg class=\"heatmap\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
        "data-ranks=\"{}\" data-cell=\"{}\" data-left=\"{}\" data-top=\"{}\">\n",
        std::max(g.left + g.side + 20, g.left + 480), g.top + g.side + 60, n, g.cell, g.left, g.top);
    write_cells(out, v, g);
    write_axis_labels(out, v, g);
    write_legend(out, v.max_gbps, g.left, g.top + g.side + 16);
    out << "</svg>\n";
}

// The failing pairs (at most 500; the JSON has the rest).
void write_failing_pairs(std::ostream& out, const MatrixView& v) {
    if (v.failed <= 0) return;
    out << "<h2>Failing pairs</h2>\n<table class=\"failures\"><tr><th>reader</th><th>owner</th><th>diagnosis</th>"
           "<th>what happened</th><th>remedy</th></tr>\n";
    const std::size_t n = v.ranks.size();
    int shown = 0;
    for (std::size_t i = 0; i < n && shown < 500; ++i) {
        for (std::size_t j = 0; j < n && shown < 500; ++j) {
            const CellView& c = v.cells[i][j];
            if (c.passed) continue;
            out << fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                               escape(describe(v.ranks[i])), escape(describe(v.ranks[j])), escape(c.diagnosis),
                               escape(c.message.value_or("")), escape(c.remedy));
            ++shown;
        }
    }
    out << "</table>\n";
    if (v.failed > shown)
        out << fmt::format("<p class=\"note\">{} more failing pairs in the JSON.</p>\n", v.failed - shown);
}

// The ten slowest passing pairs against the median.
void write_slowest_pairs(std::ostream& out, const MatrixView& v) {
    struct Slow {
        double gbps;
        std::size_t reader, owner;
    };
    std::vector<Slow> slow;
    const std::size_t n = v.ranks.size();
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
            const CellView& c = v.cells[i][j];
            if (c.passed && c.gbps) slow.push_back({*c.gbps, i, j});
        }
    }
    std::sort(slow.begin(), slow.end(), [](const Slow& a, const Slow& b) { return a.gbps < b.gbps; });
    if (slow.size() > 10) slow.resize(10);
    if (slow.empty() || v.median_gbps <= 0) return;
    out << "<h2>Slowest pairs</h2>\n<table class=\"slowest\"><tr><th>reader</th><th>owner</th><th>GB/s</th>"
           "<th>of the median</th></tr>\n";
    for (const auto& s : slow) {
        out << fmt::format("<tr><td>{}</td><td>{}</td><td>{:.1f}</td><td>{:.0f}%</td></tr>\n",
                           escape(describe(v.ranks[s.reader])), escape(describe(v.ranks[s.owner])), s.gbps,
                           100 * s.gbps / v.median_gbps);
    }
    out << "</table>\n";
}

}  // namespace

void write_matrix(std::ostream& out, const matrix::Matrix& m) {
    const MatrixView v = view_of(m);
    const std::size_t n = v.ranks.size();
    out << fmt::format(
        "<h2>Fabric matrix, run {}</h2>\n<p>{} ranks on {} node(s): {}; GB/s read by each rank (row) "
        "from each rank's memory (column); median {:.1f} GB/s.</p>\n",
        escape(m.run), n, node_groups(v.ordered).size(),
        v.failed == 0 ? "every pair passed" : fmt::format("{} of {} pairs failed", v.failed, n * n), v.median_gbps);
    write_heatmap(out, v);
    write_failing_pairs(out, v);
    write_slowest_pairs(out, v);
}

}  // namespace cumemctl::html
