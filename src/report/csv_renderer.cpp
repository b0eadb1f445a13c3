#include "report/csv_renderer.hpp"
#include "base/enum_words.hpp"
#include "util/printable.hpp"

#include <cstdint>
#include <optional>
#include <variant>

#include <fmt/format.h>

namespace cumemctl {
namespace {

// A cell as people may read it (printable: no terminal controls), quoted as RFC 4180 asks: in double
// quotes when it holds a comma or a quote.
std::string quoted(const std::string& text) {
    std::string cell = printable(text);
    if (cell.find_first_of(",\"\r\n") == std::string::npos) return cell;
    std::string out = "\"";
    for (char c : cell) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

// A column's unit in its header; none has no word.
constexpr auto kUnitWords = enum_words<CsvUnit>({{CsvUnit::mebibytes, "MiB"}, {CsvUnit::seconds, "s"}}, "");

const char* unit_name(CsvUnit unit) {
    return kUnitWords.word(unit).data();  // the words are literals: data() ends in a NUL
}

// A value without a unit: none empty, yes or no, a number as --json writes it, a list joined with ';'.
std::string cell(const CsvValue& v) {
    struct Text {
        std::string operator()(std::monostate) const { return ""; }
        std::string operator()(const std::string& s) const { return s; }
        std::string operator()(bool b) const { return b ? "yes" : "no"; }
        std::string operator()(std::int64_t n) const { return std::to_string(n); }
        std::string operator()(std::uint64_t n) const { return std::to_string(n); }
        std::string operator()(double n) const { return json_number_text(n); }
        std::string operator()(const std::vector<std::string>& list) const {
            return fmt::format("{}", fmt::join(list, ";"));
        }
    };
    return std::visit(Text{}, v);
}

// The number a value holds, none where it holds no number.
std::optional<double> number_of(const CsvValue& v) {
    if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
    if (const auto* u = std::get_if<std::uint64_t>(&v)) return static_cast<double>(*u);
    if (const auto* d = std::get_if<double>(&v)) return *d;
    return std::nullopt;
}

std::string cell(const CsvValue& v, const CsvField& field, bool units) {
    const std::optional<double> n = number_of(v);
    if (field.unit == CsvUnit::none || !n) return cell(v);
    const std::string number = field.unit == CsvUnit::mebibytes
                                   ? std::to_string(*n >= 0 ? static_cast<std::uint64_t>(*n) >> 20 : 0)
                                   : fmt::format("{:.6f}", *n);
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
    const auto* rows = dynamic_cast<const CsvRows*>(report.results.get());
    if (rows == nullptr) return;
    for (const CsvRow& row : rows->csv_rows()) {
        std::vector<std::string> cells;
        for (const auto& f : layout_.fields) {
            cells.push_back(quoted(cell(f.column < row.size() ? row[f.column] : CsvValue{}, f, layout_.units)));
        }
        out << fmt::format("{}", fmt::join(cells, ", ")) << '\n';
    }
}

}  // namespace cumemctl
