#include "report/csv_renderer.hpp"

#include <fmt/format.h>

namespace cumemctl {
namespace {

bool ends_with(const std::string& s, std::string_view tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// A cell quoted as RFC 4180 asks: in double quotes when it holds a comma, a quote or a line break.
std::string quoted(const std::string& cell) {
    if (cell.find_first_of(",\"\r\n") == std::string::npos) return cell;
    std::string out = "\"";
    for (char c : cell) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

// The value at a dotted path of `row`, or null.
nlohmann::json at_path(const nlohmann::json& row, const std::string& path) {
    const nlohmann::json* v = &row;
    std::size_t start = 0;
    while (start <= path.size()) {
        const std::size_t dot = std::min(path.find('.', start), path.size());
        const std::string key = path.substr(start, dot - start);
        if (!v->is_object() || !v->contains(key)) return nullptr;
        v = &(*v)[key];
        start = dot + 1;
    }
    return *v;
}

std::string cell(const nlohmann::json& v, const std::string& field, bool units) {
    if (v.is_null()) return "";
    if (v.is_string()) return v.get<std::string>();
    if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
    if (v.is_array()) {
        std::vector<std::string> parts;
        for (const auto& e : v) parts.push_back(cell(e, "", units));
        return fmt::format("{}", fmt::join(parts, ";"));
    }
    if (units && v.is_number() && ends_with(field, "_bytes")) {
        return fmt::format("{} MiB", v.get<double>() >= 0 ? static_cast<std::uint64_t>(v.get<double>()) >> 20 : 0);
    }
    if (units && v.is_number() && ends_with(field, "seconds")) return fmt::format("{:.4g} s", v.get<double>());
    return v.dump();
}

}  // namespace

void CsvRenderer::render(const Report& report, std::ostream& out) const {
    if (layout_.header) {
        std::vector<std::string> names;
        for (const auto& f : layout_.fields) {
            names.push_back(quoted(layout_.units && ends_with(f, "_bytes")    ? f + " [MiB]"
                                   : layout_.units && ends_with(f, "seconds") ? f + " [s]"
                                                                              : f));
        }
        out << fmt::format("{}", fmt::join(names, ", ")) << '\n';
    }
    const auto it = report.results.find(layout_.rows);
    if (it == report.results.end() || !it->is_array()) return;
    for (const auto& row : *it) {
        std::vector<std::string> cells;
        for (const auto& f : layout_.fields) cells.push_back(quoted(cell(at_path(row, f), f, layout_.units)));
        out << fmt::format("{}", fmt::join(cells, ", ")) << '\n';
    }
}

}  // namespace cumemctl
