#include "ipc/problem_wire.hpp"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <optional>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "report/report.hpp"

namespace cumemctl::ipc {
namespace {

// The problem's exit code: an integer that is one of the documented exit codes (base/exit_code.hpp);
// anything else (another number, a fraction, text) makes the message malformed.
ExitCode exit_code_of(const nlohmann::json& j) {
    const nlohmann::json& v = j.at("exit_code");
    std::optional<ExitCode> code;
    if (v.is_number_unsigned()) {  // JSON's non-negative integers, read without wrapping around
        if (const auto n = v.get<std::uint64_t>(); n <= 255) code = exit_code_from_number(static_cast<long long>(n));
    } else if (v.is_number_integer()) {
        code = exit_code_from_number(v.get<std::int64_t>());
    }
    if (!code) {
        throw nlohmann::json::other_error::create(
            501, fmt::format("the problem's exit_code {} is none of cumemctl's exit codes", v.dump()), &j);
    }
    return *code;
}

[[noreturn]] void malformed(const std::string& what, const nlohmann::json& j) {
    throw nlohmann::json::other_error::create(501, what, &j);
}

// Refuses a key of `j` that is not one of `known`.
void only_fields(const nlohmann::json& j, std::initializer_list<std::string_view> known, const char* what) {
    if (!j.is_object()) malformed(fmt::format("{} is not a JSON object", what), j);
    for (const auto& [key, value] : j.items()) {
        if (std::find(known.begin(), known.end(), key) == known.end())
            malformed(fmt::format("{} has an unknown field '{}'", what, key), j);
    }
}

// An integer field within [low, high].
std::int64_t bounded(const nlohmann::json& j, const char* key, std::int64_t low, std::int64_t high) {
    const nlohmann::json& v = j.at(key);
    if (!v.is_number_integer() || v.get<std::int64_t>() < low || v.get<std::int64_t>() > high ||
        (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(high))) {
        malformed(fmt::format("the problem's {} {} is not an integer in {}-{}", key, v.dump(), low, high), j);
    }
    return v.get<std::int64_t>();
}

// A text field that null stands for when there is none.
std::string text_of(const nlohmann::json& j, const char* key) {
    const nlohmann::json& v = j.at(key);
    if (v.is_null()) return {};
    if (!v.is_string()) malformed(fmt::format("the problem's {} is neither text nor null", key), j);
    return v.get<std::string>();
}

// The processes that hold the device ({"pid", "name", "used_bytes"} each, as report's to_json writes them).
std::vector<GpuProcess> holders_from_json(const nlohmann::json& list) {
    if (!list.is_array()) malformed("the problem's held_by is not a list", list);
    std::vector<GpuProcess> out;
    for (const nlohmann::json& h : list) {
        only_fields(h, {"pid", "name", "used_bytes"}, "a process of the problem's held_by");
        GpuProcess p;
        p.pid = static_cast<unsigned>(bounded(h, "pid", 0, std::numeric_limits<std::uint32_t>::max()));
        p.name = text_of(h, "name");
        if (!h.at("used_bytes").is_null()) {
            if (!h["used_bytes"].is_number_unsigned()) malformed("a held_by process's used_bytes is no byte count", h);
            p.used = h["used_bytes"].get<std::uint64_t>();
        }
        out.push_back(std::move(p));
    }
    return out;
}

}  // namespace

nlohmann::json problem_to_json(const Problem& problem) {
    return to_json(problem);
}

Problem problem_from_json(const nlohmann::json& j) {
    only_fields(j, {"message", "cause", "remedy", "exit_code", "kind", "device", "driver_call", "held_by"},
                "the problem");
    Problem p;
    p.message = j.at("message").get<std::string>();
    p.cause = text_of(j, "cause");
    p.remedy = text_of(j, "remedy");
    p.exit_code = exit_code_of(j);
    // "kind" is the exit code's name, or a name that says more ("busy"); any other word is malformed.
    if (j.contains("kind")) {
        if (!j["kind"].is_string()) malformed("the problem's kind is not a string", j);
        const auto kind = parse_problem_kind(j["kind"].get<std::string>(), p.exit_code);
        if (!kind) malformed("the problem's kind is neither its exit code's name nor input or busy", j);
        p.kind = *kind;
    }
    if (j.contains("held_by")) p.held_by = holders_from_json(j["held_by"]);
    if (j.contains("device") && !j["device"].is_null()) p.device = static_cast<int>(bounded(j, "device", 0, 1 << 20));
    if (j.contains("driver_call") && !j["driver_call"].is_null()) {
        const auto& d = j["driver_call"];
        only_fields(d, {"call", "result", "name", "text"}, "the problem's driver_call");
        p.driver = DriverFailure{d.at("call").get<std::string>(), static_cast<int>(bounded(d, "result", 0, 1 << 20)),
                                 d.at("name").get<std::string>(), d.at("text").get<std::string>()};
    }
    return p;
}

}  // namespace cumemctl::ipc
