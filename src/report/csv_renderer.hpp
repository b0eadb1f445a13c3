// CSV as nvidia-smi --query-gpu writes it: one line per row of a report's results (a GPU of devices, a
// check of doctor), the fields named, a header unless asked not to, and units unless asked not to.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "report/renderer.hpp"

namespace cumemctl {

// What a CSV of one command holds: where its rows are in the results, and the fields.
struct CsvLayout {
    std::string rows;                 // the results' key of the rows: "devices", "checks"
    std::vector<std::string> fields;  // dotted paths into each row: "uuid", "capabilities.vmm"
    bool header = true;               // noheader: false
    bool units = true;                // nounits: false
};

// Writes the rows (RFC 4180 quoting). With units, a field ending in _bytes is written in MiB
// ("143155 MiB", its header "total_bytes [MiB]"), one named seconds in seconds ("0.0123 s"); without,
// every value as the JSON has it. A missing value or null is empty; a list is joined with ';'.
class CsvRenderer final : public Renderer {
public:
    explicit CsvRenderer(CsvLayout layout) : layout_(std::move(layout)) {}
    void render(const Report& report, std::ostream& out) const override;

private:
    CsvLayout layout_;
};

}  // namespace cumemctl
