// The report model: what every command hands to a renderer. Typed results (JSON for programs), tables for people.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cuda/driver_info.hpp"
#include "base/error.hpp"
#include "base/verdict.hpp"
#include "report/results.hpp"
#include "util/host.hpp"

namespace cumemctl {

inline constexpr const char* kSchemaName = "cumemctl.report";
inline constexpr int kSchemaVersion = 1;

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

// The widest one-line summary (--format line): the drain reason of Slurm and NHC.
inline constexpr std::size_t kSummaryLineWidth = 70;

// How a report leaves the process, apart from what it says.
struct Delivery {
    std::string output_file;    // where the rendered output goes instead of stdout, atomically (doctor --output)
    bool stdout_quiet = false;  // nothing on standard output (errors still go to stderr): a rank that is not
                                // the one that reports a run through one launcher's stream
    bool end_without_unwinding = false;  // threads still wait in a call (doctor past its budget): _exit after
                                         // rendering
};

// A command's whole answer. `results` is what the command found, typed; `tables` is the same for people.

struct Report {
    std::string command;
    std::string host = host_name();                                                    // the node it describes
    std::chrono::system_clock::time_point started = std::chrono::system_clock::now();  // when the command began
    DriverInfo driver;
    std::shared_ptr<const Results> results;  // none where the command failed before it found anything
    std::vector<Table> tables;
    std::string text;             // text written as is before the tables (a completion script)
    std::string line;             // the one-line summary that --format line writes (doctor fills it)
    std::string nodelist;         // the Slurm host list that --format nodelist writes (fleet: its failing nodes)
    std::vector<Metric> metrics;  // what --format prometheus writes (commands that support it fill it)
    std::vector<Problem> errors;
    std::vector<Problem> warnings;
    ExitCode exit_code = ExitCode::ok;
    std::optional<std::chrono::system_clock::time_point> expires;  // when what it says stops holding (NFD expiry)
    Delivery delivery;

    // Records an error; the first error decides the exit code.
    void add_error(Problem problem);
    // Records a warning: shown, but the exit code stays.
    void add_warning(std::string message, std::string remedy = {}, std::optional<int> device = std::nullopt);
    // Adds one gauge sample (name without the cumemctl_ prefix).
    void add_metric(std::string name, std::string help, MetricLabels labels, double value);
    // Marks a failed check without a separate error entry (the results say what failed).
    void mark_failed();
    bool ok() const { return exit_code == ExitCode::ok; }
    // The results where they are a `T`, else null: what a renderer that draws one kind of result asks.
    template <class T>
    const T* results_as() const {
        return dynamic_cast<const T*>(results.get());
    }
    template <class T>
    void set_results(T value) {
        results = std::make_shared<const T>(std::move(value));
    }
};

// The JSON envelope of the design: schema, command, host, timestamp, tool, driver, results, errors, warnings, ok, exit
// code.
nlohmann::json to_json(const Report& report);
// The envelope as one pretty-printed JSON document (two spaces, invalid UTF-8 replaced), as --json writes it.
std::string report_json_text(const Report& report);
// One problem as JSON (message, cause, remedy, exit code, driver failure, device and held_by where known).
nlohmann::json to_json(const Problem& problem);
// One process on a GPU as JSON: {"pid", "name", "used_bytes"}, name and used_bytes null where NVML did
// not say.
nlohmann::json to_json(const GpuProcess& process);

}  // namespace cumemctl
