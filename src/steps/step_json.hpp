// The one shape of a step in JSON and in a table. JSON (schema/report.schema.json, $defs/step): every
// key always present: {"step", "call", "result", "code", "ok", "seconds", "detail", "undo", "process"},
// with "result" the driver's answer by name and "code" the CUresult (null when the step is no single
// driver call); call, result, detail and process are null where they are none (no call, result
// unknown, no detail, this process), never "". A table: the columns step, call, result, time (milliseconds, three
// decimals) and detail, with a first column "process" when a second process's steps are among them.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/report.hpp"
#include "steps/step.hpp"

namespace cumemctl::steps {

nlohmann::json to_json(const Step& step);
// A step as to_json wrote it (a second process's); throws nlohmann::json::exception when malformed.
Step step_from_json(const nlohmann::json& j);

// A list of steps as a JSON array, and back.
nlohmann::json steps_json(const std::vector<Step>& steps);
std::vector<Step> steps_from_json(const nlohmann::json& j);

// What a table shows in a step's result column: "ok", the driver's answer, or "fail".
std::string result_text(const Step& step);
// A step's time as a table shows it: "0.123 ms".
std::string time_text(double seconds);

// The steps as one table titled `title`.
Table steps_table(std::string title, const std::vector<Step>& steps);

}  // namespace cumemctl::steps

namespace cumemctl {
using steps::steps_json;
using steps::steps_table;
}  // namespace cumemctl
