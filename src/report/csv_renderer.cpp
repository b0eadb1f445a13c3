#include "report/csv_renderer.hpp"
#include "util/printable.hpp"

#include <cstdint>

#include <fmt/format.h>

namespace cumemctl {
namespace {

// A cell as people may read it (printable: no terminal controls), quoted as RFC 4180 asks: in double
// quotes when it holds a comma or a quote.
std::string quoted(const std::string& text) {
    const std::string cell = printable(text);
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

const char* unit_name(CsvUnit unit) {
    switch (unit) {
        case CsvUnit::mebibytes:
            return "MiB";
        case CsvUnit::seconds:
            return "s";
        case CsvUnit::none:
            break;
    }
    return "";
}

std::string cell(const nlohmann::json& v) {
    if (v.is_null()) return "";
    if (v.is_string()) return v.get<std::string>();
    if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
    if (v.is_array()) {
        std::vector<std::string> parts;
        for (const auto& e : v) parts.push_back(cell(e));
        return fmt::format("{}", fmt::join(parts, ";"));
    }
    return v.dump();
}

std::string cell(const nlohmann::json& v, const CsvField& field, bool units) {
    if (field.unit == CsvUnit::none || !v.is_number()) return cell(v);
    const double n = v.get<double>();
    const std::string number = field.unit == CsvUnit::mebibytes
                                   ? std::to_string(n >= 0 ? static_cast<std::uint64_t>(n) >> 20 : 0)
                                   : fmt::format("{:.6f}", n);
    return units ? number + " " + unit_name(field.unit) : number;
}

}  // namespace

void CsvRenderer::render(const Report& report, std::ostream& out) const {
    if (layout_.header) {
        std::vector<std::string> names;
        for (const auto& f : layout_.fields) {
            const bool bracket = layout_.units && f.unit != CsvUnit::none;
            names.push_back(quoted(bracket ? fmt::format("{} [{}]", f.name, unit_name(f.unit)) : f.name));
        }
        out << fmt::format("{}", fmt::join(names, ", ")) << '\n';
    }
    const auto it = report.results.find(layout_.rows);
    if (it == report.results.end() || !it->is_array()) return;
    for (const auto& row : *it) {
        std::vector<std::string> cells;
        for (const auto& f : layout_.fields) cells.push_back(quoted(cell(at_path(row, f.path), f, layout_.units)));
        out << fmt::format("{}", fmt::join(cells, ", ")) << '\n';
    }
}

}  // namespace cumemctl
