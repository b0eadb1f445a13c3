#include "steps/step_json.hpp"
#include "report/json_fields.hpp"
#include "util/duration.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace cumemctl::steps {

nlohmann::json to_json(const Step& step) {
    return {{"step", step.name},
            {"call", text_or_null(step.call)},
            {"result", text_or_null(step.result_name)},
            {"code", step.result ? nlohmann::json(*step.result) : nlohmann::json(nullptr)},
            {"ok", step.ok},
            {"seconds", step.seconds},
            {"detail", text_or_null(step.detail)},
            {"undo", step.undo},
            {"process", text_or_null(step.process)}};
}

namespace {

// A text of to_json's: null is none ("").
std::string text_of(const nlohmann::json& j, const char* key) {
    const nlohmann::json& v = j.at(key);
    return v.is_null() ? std::string() : v.get<std::string>();
}

}  // namespace

Step step_from_json(const nlohmann::json& j) {
    Step s;
    s.name = j.at("step").get<std::string>();
    s.call = text_of(j, "call");
    s.result_name = text_of(j, "result");
    if (!j.at("code").is_null()) s.result = j.at("code").get<int>();
    s.ok = j.at("ok").get<bool>();
    s.seconds = j.at("seconds").get<double>();
    s.detail = text_of(j, "detail");
    s.undo = j.at("undo").get<bool>();
    s.process = text_of(j, "process");
    return s;
}

nlohmann::json steps_json(const std::vector<Step>& steps) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& s : steps) j.push_back(to_json(s));
    return j;
}

std::vector<Step> steps_from_json(const nlohmann::json& j) {
    std::vector<Step> out;
    for (const auto& s : j) out.push_back(step_from_json(s));
    return out;
}

std::string result_text(const Step& step) {
    if (step.ok) return "ok";
    return step.result_name.empty() ? std::string("fail") : step.result_name;
}

std::string time_text(double seconds) {
    return format_duration(seconds);
}

Table steps_table(std::string title, const std::vector<Step>& steps) {
    const bool processes = std::any_of(steps.begin(), steps.end(), [](const Step& s) { return !s.process.empty(); });
    Table t{std::move(title), {"step", "call", "result", "time", "detail"}, {}, {}};
    if (processes) t.columns.insert(t.columns.begin(), "process");
    t.wrap_last = true;  // the detail wraps to the width, or goes below its step where the rest is wide
    for (const auto& s : steps) {
        std::vector<TableCell> row{
            s.name, s.call, {result_text(s), tone_of_answer(s.ok)}, time_text(s.seconds), s.detail};
        if (processes) row.insert(row.begin(), s.process.empty() ? std::string("-") : s.process);
        t.rows.push_back(std::move(row));
    }
    return t;
}

}  // namespace cumemctl::steps
