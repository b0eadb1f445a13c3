// The report model: what every command hands to a renderer. Typed results, which draw every view (results.hpp),
// and the envelope: errors, warnings, exit code, how it is delivered.
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

// How a report leaves the process, apart from what it says.
struct Delivery {
    std::string output_file;    // where the rendered output goes instead of stdout, atomically (doctor --output)
    bool stdout_quiet = false;  // nothing on standard output (errors still go to stderr): a rank that is not
                                // the one that reports a run through one launcher's stream
    bool end_without_unwinding = false;  // threads still wait in a call (doctor past its budget): _exit after
                                         // rendering
};

// A command's whole answer: its typed results and the envelope's facts.

struct Report {
    std::string command;
    std::string host = host_name();                                                    // the node it describes
    std::chrono::system_clock::time_point started = std::chrono::system_clock::now();  // when the command began
    DriverInfo driver;
    // What the command found, typed, which draws its own views (tables, line, metrics, node list); none
    // where the command failed before it found anything.
    std::shared_ptr<const Results> results;
    std::vector<Problem> errors;
    std::vector<Problem> warnings;
    ExitCode exit_code = ExitCode::ok;
    std::optional<std::chrono::system_clock::time_point> expires;  // when what it says stops holding (NFD expiry)
    Delivery delivery;

    // Records an error; the first error decides the exit code.
    void add_error(Problem problem);
    // Records a warning: shown, but the exit code stays.
    void add_warning(std::string message, std::string remedy = {}, std::optional<int> device = std::nullopt);
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
