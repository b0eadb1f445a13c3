#include "ipc/problem_wire.hpp"

#include <cstdint>
#include <optional>

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

}  // namespace

nlohmann::json problem_to_json(const Problem& problem) {
    return to_json(problem);
}

Problem problem_from_json(const nlohmann::json& j) {
    Problem p;
    p.message = j.at("message").get<std::string>();
    p.cause = j.at("cause").get<std::string>();
    p.remedy = j.at("remedy").get<std::string>();
    p.exit_code = exit_code_of(j);
    if (j.contains("device")) p.device = j["device"].get<int>();
    if (j.contains("driver_call")) {
        const auto& d = j["driver_call"];
        p.driver = DriverFailure{d.at("call").get<std::string>(), d.at("result").get<int>(),
                                 d.at("name").get<std::string>(), d.at("text").get<std::string>()};
    }
    return p;
}

}  // namespace cumemctl::ipc
