#include "steps/step_json.hpp"
#include "util/duration.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace cumemctl::steps {

nlohmann::json to_json(const Step& step) {
    return {{"step", step.name},
            {"call", step.call},
            {"result", step.result_name},
            {"code", step.result ? nlohmann::json(*step.result) : nlohmann::json(nullptr)},
            {"ok", step.ok},
            {"seconds", step.seconds},
            {"detail", step.detail},
            {"undo", step.undo},
            {"process", step.process}};
}

Step step_from_json(const nlohmann::json& j) {
    Step s;
    s.name = j.at("step").get<std::string>();
    s.call = j.at("call").get<std::string>();
    s.result_name = j.at("result").get<std::string>();
    if (!j.at("code").is_null()) s.result = j.at("code").get<int>();
    s.ok = j.at("ok").get<bool>();
    s.seconds = j.at("seconds").get<double>();
    s.detail = j.at("detail").get<std::string>();
    s.undo = j.at("undo").get<bool>();
    s.process = j.at("process").get<std::string>();
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
        std::vector<std::string> row{s.name, s.call, result_text(s), time_text(s.seconds), s.detail};
        if (processes) row.insert(row.begin(), s.process.empty() ? std::string("-") : s.process);
        t.rows.push_back(std::move(row));
    }
    return t;
}

}  // namespace cumemctl::steps
