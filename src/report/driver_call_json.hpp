// A failed driver call as a report's JSON writes it, for problems, doctor's checks and JUnit alike.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "base/error.hpp"

namespace cumemctl {

// {"call", "result", "name", "text"}.
nlohmann::json to_json(const DriverFailure& failure);
// The same on one line.
std::string driver_call_json_text(const DriverFailure& failure);

}  // namespace cumemctl
