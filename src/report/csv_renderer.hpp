// CSV as nvidia-smi --query-gpu writes it: one line per row of a report's results (a GPU of devices, a
// check of doctor), the fields named, a header unless asked not to, and units unless asked not to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <variant>
#include <vector>

#include "report/renderer.hpp"

namespace cumemctl {

// One value of a row as the result holds it: none (an empty cell), a text, yes or no, a whole number,
// a real number (written as --json writes it), a list (joined with ';').
using CsvValue =
    std::variant<std::monostate, std::string, bool, std::int64_t, std::uint64_t, double, std::vector<std::string>>;
// One row: a value for each column of its result's catalogue, in that order.
using CsvRow = std::vector<CsvValue>;

// A result that has rows for --format csv (a GPU of devices, a check of doctor, a figure of bandwidth).
class CsvRows {
public:
    virtual ~CsvRows() = default;
    virtual std::vector<CsvRow> csv_rows() const = 0;
};

// How a field's value is written: as --json writes it, or in a unit that the header names.
enum class CsvUnit {
    none,       // as --json writes it (a _bytes field in bytes)
    mebibytes,  // a figure in bytes, written in whole MiB: "190464 MiB", header "total [MiB]"
    seconds,    // a figure in seconds, in fixed notation to the microsecond: "0.000012 s"
};

// One field of a CSV: its name in the header and in --fields, the column of the rows that holds its
// value, and its unit.
struct CsvField {
    std::string name;  // "uuid", "total", "capabilities.vmm"
    std::size_t column = 0;
    CsvUnit unit = CsvUnit::none;
};

// What a CSV of one command holds: the fields.
struct CsvLayout {
    std::vector<CsvField> fields;  // in the order written
    bool header = true;            // noheader: false
    bool units = true;             // nounits: false
};

// Writes the rows (RFC 4180 quoting), as nvidia-smi does: a field with a unit has it in its header
// ("total [MiB]") and after each value ("190464 MiB"); nounits drops both and changes nothing else.
// A missing value or null is empty; a list is joined with ';'; a boolean is yes or no.
class CsvRenderer final : public Renderer {
public:
    explicit CsvRenderer(CsvLayout layout) : layout_(std::move(layout)) {}
    void render(const Report& report, std::ostream& out) const override;

private:
    CsvLayout layout_;
};

}  // namespace cumemctl
