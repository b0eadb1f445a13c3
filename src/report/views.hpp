// The views a result draws of itself for people and monitors: tables (with the tone of each cell) and
// Prometheus samples. The result makes them when a renderer asks (results.hpp), never ahead of time.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "base/verdict.hpp"

namespace cumemctl {

// How a terminal colours a table's cell: by what the cell means, set where it is made, never read
// from its text.
enum class Tone { plain, good, attention, bad, faint };

// One cell of a table: its text and its tone.
struct TableCell {
    std::string text;
    Tone tone = Tone::plain;

    TableCell() = default;
    TableCell(std::string t, Tone how = Tone::plain) : text(std::move(t)), tone(how) {}  // NOLINT: implicit
    TableCell(const char* t) : text(t) {}                                                // NOLINT: implicit
    bool operator==(const TableCell&) const = default;
};

// The tone of a verdict: pass good; warn and busy attention; fail and timeout bad; skip faint.
Tone tone_of(CheckStatus status);
// The tone of a yes or no: yes good, no bad.
Tone tone_of_answer(bool yes);

// A row of cells from their texts, each plain.
std::vector<TableCell> plain_cells(const std::vector<std::string>& texts);
// The texts of a row of cells.
std::vector<std::string> cell_texts(const std::vector<TableCell>& cells);

// A table for people: a title, column headings and rows of cells, with notes printed under it.
struct Table {
    std::string title;
    std::vector<std::string> columns;
    std::vector<std::vector<TableCell>> rows;
    std::vector<std::string> notes;
    bool wrap_last = false;  // wrap the last column and the notes at spaces to fit the output width
};

// Label pairs of a metric sample, in the order they are written: {"device", "0"}, {"check", "driver"}.
using MetricLabels = std::vector<std::pair<std::string, std::string>>;

// One sample of a Prometheus gauge: the family name without the "cumemctl_" prefix (for example
// "device_memory_total_bytes"), the family's help text, the labels and the value. Samples of one
// family share name and help; the Prometheus renderer writes HELP and TYPE once per family.
struct Metric {
    std::string name;
    std::string help;
    MetricLabels labels;
    double value = 0;
};

// The samples a result's metrics view gathers, one at a time.
struct Metrics {
    std::vector<Metric> samples;
    // Adds one gauge sample (name without the cumemctl_ prefix).
    void add(std::string name, std::string help, MetricLabels labels, double value) {
        samples.push_back(Metric{std::move(name), std::move(help), std::move(labels), value});
    }
};

// The widest one-line summary (--format line): the drain reason of Slurm and NHC.
inline constexpr std::size_t kSummaryLineWidth = 70;

}  // namespace cumemctl
