// CSV as nvidia-smi --query-gpu writes it: one line per row of a report's results (a GPU of devices, a
// check of doctor), the fields named, a header unless asked not to, and units unless asked not to.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "report/renderer.hpp"

namespace cumemctl {

// How a field's value is written: as the JSON has it, or in a unit that the header names.
enum class CsvUnit {
    none,       // as the JSON has it (a _bytes field in bytes)
    mebibytes,  // a JSON figure in bytes, written in whole MiB: "190464 MiB", header "total [MiB]"
    seconds,    // a JSON figure in seconds, in fixed notation to the microsecond: "0.000012 s"
};

// One field of a CSV: its name in the header and in --fields, where its value is in each row, and its unit.
struct CsvField {
    std::string name;  // "uuid", "total", "capabilities.vmm"
    std::string path;  // a dotted path into the row: "uuid", "total_bytes", "capabilities.vmm"
    CsvUnit unit = CsvUnit::none;
};

// What a CSV of one command holds: where its rows are in the results, and the fields.
struct CsvLayout {
    std::string rows;              // the results' key of the rows: "devices", "checks"
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
