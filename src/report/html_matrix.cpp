// The fabric-matrix page: an SVG heat map with one cell per (reader, owner) pair, rows and columns
// grouped by node, then GPU; the legend; the failing pairs and the slowest pairs against the median.
#include <algorithm>
#include <numeric>
#include <vector>

#include <fmt/format.h>

#include "report/html_parts.hpp"
#include "report/json_fields.hpp"

namespace cumemctl::html {
namespace {

// One rank as the page names it.
struct RankView {
    int rank = 0;
    std::string host;  // "?" where it never came
    int device = -1;
    std::string uuid;
};

std::vector<RankView> ranks_of(const nlohmann::json& m) {
    std::vector<RankView> out;
    for (const auto& r : m.value("rank_info", nlohmann::json::array())) {
        RankView v;
        v.rank = r.value("rank", 0);
        v.host = json_text(r, "host");
        if (v.host.empty()) v.host = "?";
        const auto device = r.value("device", nlohmann::json());
        v.device = device.is_number_integer() ? device.get<int>() : -1;
        // "uuid"; "gpu_uuid" in the reports of an older cumemctl.
        const auto uuid = r.value("uuid", r.value("gpu_uuid", nlohmann::json()));
        v.uuid = uuid.is_string() ? uuid.get<std::string>() : "";
        out.push_back(std::move(v));
    }
    return out;
}

std::string describe(const RankView& r) {
    return fmt::format("rank {} ({} GPU {}{})", r.rank, r.host,
                       r.device < 0 ? std::string("?") : std::to_string(r.device), r.uuid.empty() ? "" : " " + r.uuid);
}

std::optional<double> gbps_of(const nlohmann::json& cell) {
    const auto g = cell.value("gbps", nlohmann::json());
    return g.is_number() ? std::optional<double>(g.get<double>()) : std::nullopt;
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

}  // namespace

void write_matrix(std::ostream& out, const nlohmann::json& m) {
    const std::vector<RankView> ranks = ranks_of(m);
    const auto& rows = m.value("cells", nlohmann::json::array());
    const std::size_t n = ranks.size();
    // Rows and columns by node, then GPU, so that a node (or a tray of them) shows as a band.
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return std::tie(ranks[a].host, ranks[a].device, ranks[a].rank) <
               std::tie(ranks[b].host, ranks[b].device, ranks[b].rank);
    });
    std::vector<RankView> ordered;
    for (std::size_t i : order) ordered.push_back(ranks[i]);
    auto cell_at = [&](std::size_t reader, std::size_t owner) -> nlohmann::json {
        if (reader >= rows.size() || !rows[reader].is_array() || owner >= rows[reader].size()) return {};
        return rows[reader][owner];
    };
    std::vector<double> speeds;
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
            const auto c = cell_at(i, j);
            if (c.is_object() && c.value("status", "") == "pass") {
                if (auto g = gbps_of(c)) speeds.push_back(*g);
            }
        }
    }
    const double max_gbps = speeds.empty() ? 0 : *std::max_element(speeds.begin(), speeds.end());
    const double mid = median(speeds);
    const int failed = m.value("failed_pairs", 0);
    out << fmt::format(
        "<h2>Fabric matrix, run {}</h2>\n<p>{} ranks on {} node(s): {}; GB/s read by each rank (row) "
        "from each rank's memory (column); median {:.1f} GB/s.</p>\n",
        escape(m.value("run", "")), n, node_groups(ordered).size(),
        failed == 0 ? "every pair passed" : fmt::format("{} of {} pairs failed", failed, n * n), mid);

    const int cell = static_cast<int>(std::clamp<std::size_t>(n == 0 ? 28 : 720 / n, 6, 28));
    const int left = 150, top = 120;
    const int side = static_cast<int>(n) * cell;
    out << fmt::format(
        "<svg class=\"heatmap\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
        "data-ranks=\"{}\" data-cell=\"{}\" data-left=\"{}\" data-top=\"{}\">\n",
        std::max(left + side + 20, left + 480), top + side + 60, n, cell, left, top);
    for (std::size_t y = 0; y < n; ++y) {
        const RankView& reader = ordered[y];
        for (std::size_t x = 0; x < n; ++x) {
            const RankView& owner = ordered[x];
            const auto c = cell_at(order[y], order[x]);
            const std::string status = c.is_object() ? c.value("status", "fail") : "fail";
            const std::optional<double> measured = c.is_object() ? gbps_of(c) : std::nullopt;
            const bool has_gbps = measured.has_value();
            const double gbps = measured.value_or(0.0);
            const std::string diagnosis = c.is_object() ? c.value("diagnosis", "") : "missing";
            std::string fill, klass, what;
            if (status == "pass" && has_gbps) {
                fill = scale_colour(gbps, max_gbps);
                klass = "pass";
                what = fmt::format("{:.1f} GB/s", gbps);
            } else if (status == "pass") {
                fill = kMissingColour;
                klass = "pass nodata";
                what = "passed, no measurement";
            } else {
                fill = kFailColour;
                klass = "fail";
                const auto problem = c.is_object() ? c.value("problem", nlohmann::json()) : nlohmann::json();
                what = fmt::format("failed: {}{}", diagnosis.empty() ? "?" : diagnosis,
                                   problem.is_object() ? ": " + problem.value("message", "") : "");
            }
            out << fmt::format(
                "<rect class=\"cell {}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" "
                "data-reader=\"{}\" data-owner=\"{}\" data-gbps=\"{}\" data-diagnosis=\"{}\">"
                "<title>{} reads {}: {}</title></rect>\n",
                klass, left + static_cast<int>(x) * cell, top + static_cast<int>(y) * cell, cell, cell, fill,
                reader.rank, owner.rank, has_gbps ? fmt::format("{:.3f}", gbps) : "", escape(diagnosis),
                escape(describe(reader)), escape(describe(owner)), escape(what));
        }
    }
    // GPU numbers beside each row and column where the cells have room for them.
    const bool gpu_labels = cell >= 14;
    if (gpu_labels) {
        for (std::size_t i = 0; i < n; ++i) {
            const int at = static_cast<int>(i) * cell + cell / 2;
            const std::string gpu = ordered[i].device < 0 ? "?" : std::to_string(ordered[i].device);
            out << fmt::format(
                "<text class=\"gpu-label\" x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"end\" "
                "dominant-baseline=\"middle\">{}</text><text class=\"gpu-label\" x=\"{}\" y=\"{}\" "
                "font-size=\"10\" text-anchor=\"middle\">{}</text>\n",
                left - 4, top + at, gpu, left + at, top - 4, gpu);
        }
    }
    // Node bands: a line between nodes, the node's name on both axes.
    const int offset = gpu_labels ? 18 : 4;
    for (const auto& [first, end] : node_groups(ordered)) {
        const int a = static_cast<int>(first) * cell, b = static_cast<int>(end) * cell;
        const std::string host = escape(ordered[first].host);
        out << fmt::format(
            "<text class=\"node-label\" x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"end\" "
            "dominant-baseline=\"middle\">{}</text>\n",
            left - offset, top + (a + b) / 2, host);
        out << fmt::format(
            "<text class=\"node-label\" x=\"{0}\" y=\"{1}\" font-size=\"12\" "
            "transform=\"rotate(-60 {0} {1})\">{2}</text>\n",
            left + (a + b) / 2, top - offset, host);
        if (first > 0) {
            out << fmt::format(
                "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#000\" stroke-width=\"1\"/>"
                "<line x1=\"{3}\" y1=\"{4}\" x2=\"{3}\" y2=\"{5}\" stroke=\"#000\" stroke-width=\"1\"/>\n",
                left, top + a, left + side, left + a, top, top + side);
        }
    }
    write_legend(out, max_gbps, left, top + side + 16);
    out << "</svg>\n";

    // The failing pairs, then the slowest passing pairs.
    if (failed > 0) {
        out << "<h2>Failing pairs</h2>\n<table class=\"failures\"><tr><th>reader</th><th>owner</th><th>diagnosis</th>"
               "<th>what happened</th><th>remedy</th></tr>\n";
        int shown = 0;
        for (std::size_t i = 0; i < n && shown < 500; ++i) {
            for (std::size_t j = 0; j < n && shown < 500; ++j) {
                const auto c = cell_at(i, j);
                if (c.is_object() && c.value("status", "") == "pass") continue;
                const auto problem = c.is_object() ? c.value("problem", nlohmann::json()) : nlohmann::json();
                out << fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                                   escape(describe(ranks[i])), escape(describe(ranks[j])),
                                   escape(c.is_object() ? c.value("diagnosis", "") : "missing"),
                                   escape(json_text(problem, "message")), escape(json_text(problem, "remedy")));
                ++shown;
            }
        }
        out << "</table>\n";
        if (failed > shown)
            out << fmt::format("<p class=\"note\">{} more failing pairs in the JSON.</p>\n", failed - shown);
    }
    struct Slow {
        double gbps;
        std::size_t reader, owner;
    };
    std::vector<Slow> slow;
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
            const auto c = cell_at(i, j);
            if (!c.is_object() || c.value("status", "") != "pass") continue;
            if (auto g = gbps_of(c)) slow.push_back({*g, i, j});
        }
    }
    std::sort(slow.begin(), slow.end(), [](const Slow& a, const Slow& b) { return a.gbps < b.gbps; });
    if (slow.size() > 10) slow.resize(10);
    if (!slow.empty() && mid > 0) {
        out << "<h2>Slowest pairs</h2>\n<table class=\"slowest\"><tr><th>reader</th><th>owner</th><th>GB/s</th>"
               "<th>of the median</th></tr>\n";
        for (const auto& s : slow) {
            out << fmt::format("<tr><td>{}</td><td>{}</td><td>{:.1f}</td><td>{:.0f}%</td></tr>\n",
                               escape(describe(ranks[s.reader])), escape(describe(ranks[s.owner])), s.gbps,
                               100 * s.gbps / mid);
        }
        out << "</table>\n";
    }
}

}  // namespace cumemctl::html
