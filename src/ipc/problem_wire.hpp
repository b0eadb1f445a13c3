// The one wire format of a Problem between our processes: the report's own JSON of a problem
// (report/report.hpp to_json: message, cause, remedy, exit_code, kind, device, driver_call), and its
// one decoder.
#pragma once

#include <nlohmann/json.hpp>

#include "base/error.hpp"

namespace cumemctl::ipc {

// The problem as it travels (the same JSON as a report's error).
nlohmann::json problem_to_json(const Problem& problem);

// The one decoder: a problem from that JSON, read strictly (it may come from another rank's file);
// throws nlohmann::json::exception when malformed: a field missing, unknown or of the wrong type, a
// device or driver result out of range, or an exit code that is none of the documented ones
// (base/exit_code.hpp).
Problem problem_from_json(const nlohmann::json& j);

}  // namespace cumemctl::ipc
