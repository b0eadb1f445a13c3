#include "report/report.hpp"
#include "report/driver_call_json.hpp"
#include "report/json_fields.hpp"
#include "util/version.hpp"

#include <utility>

#include <nlohmann/json.hpp>

namespace cumemctl {

Tone tone_of(CheckStatus status) {
    switch (status) {
        case CheckStatus::pass:
            return Tone::good;
        case CheckStatus::warn:
        case CheckStatus::busy:
            return Tone::attention;
        case CheckStatus::skip:
            return Tone::faint;
        case CheckStatus::fail:
        case CheckStatus::timeout:
            break;
    }
    return Tone::bad;
}

Tone tone_of_answer(bool yes) {
    return yes ? Tone::good : Tone::bad;
}

std::vector<TableCell> plain_cells(const std::vector<std::string>& texts) {
    return {texts.begin(), texts.end()};
}

std::vector<std::string> cell_texts(const std::vector<TableCell>& cells) {
    std::vector<std::string> texts;
    for (const TableCell& c : cells) texts.push_back(c.text);
    return texts;
}

void Report::add_error(Problem problem) {
    if (exit_code == ExitCode::ok) exit_code = problem.exit_code == ExitCode::ok ? ExitCode::failed : problem.exit_code;
    errors.push_back(std::move(problem));
}

void Report::add_warning(std::string message, std::string remedy, std::optional<int> device) {
    Problem p;
    p.exit_code = ExitCode::ok;
    p.message = std::move(message);
    p.remedy = std::move(remedy);
    p.device = device;
    warnings.push_back(std::move(p));
}

void Report::mark_failed() {
    if (exit_code == ExitCode::ok) exit_code = ExitCode::failed;
}

std::string json_number_text(double value) {
    return nlohmann::json(value).dump();
}

nlohmann::json to_json(const Problem& problem) {
    nlohmann::json j{{"message", problem.message},
                     {"cause", text_or_null(problem.cause)},
                     {"remedy", text_or_null(problem.remedy)},
                     {"exit_code", static_cast<int>(problem.exit_code)},
                     {"kind", problem_kind_name(problem)}};
    if (problem.device) j["device"] = *problem.device;
    if (!problem.held_by.empty()) {
        j["held_by"] = nlohmann::json::array();
        for (const GpuProcess& p : problem.held_by) j["held_by"].push_back(to_json(p));
    }
    if (problem.driver) j["driver_call"] = to_json(*problem.driver);
    return j;
}

nlohmann::json to_json(const GpuProcess& process) {
    return {{"pid", process.pid},
            {"name", text_or_null(process.name)},
            {"used_bytes", process.used ? nlohmann::json(*process.used) : nlohmann::json(nullptr)}};
}

nlohmann::json to_json(const Report& report) {
    // library and error are null where no driver was tried (a usage error, a command that needs none).
    nlohmann::json driver{{"library", text_or_null(report.driver.library)}, {"loaded", report.driver.loaded}};
    if (report.driver.loaded) {
        driver["version"] = report.driver.version;
        driver["version_string"] = cuda_version_string(report.driver.version);
    } else {
        driver["version"] = nullptr;
        driver["error"] = text_or_null(report.driver.error);
    }
    nlohmann::json errors = nlohmann::json::array();
    for (const auto& e : report.errors) errors.push_back(to_json(e));
    nlohmann::json warnings = nlohmann::json::array();
    for (const auto& w : report.warnings) warnings.push_back(to_json(w));
    return nlohmann::json{{"schema", kSchemaName},
                          {"schema_version", kSchemaVersion},
                          {"command", text_or_null(report.command)},
                          {"host", report.host},
                          {"timestamp", utc_timestamp(report.started)},
                          {"tool", {{"name", "cumemctl"}, {"version", tool_version()}, {"commit", git_commit()}}},
                          {"driver", std::move(driver)},
                          {"results", report.results ? report.results->to_json() : nlohmann::json::object()},
                          {"errors", std::move(errors)},
                          {"warnings", std::move(warnings)},
                          {"ok", report.ok()},
                          {"exit_code", static_cast<int>(report.exit_code)}};
}

std::string report_json_text(const Report& report) {
    return to_json(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace cumemctl
