#include "base/error.hpp"

#include <utility>

namespace cumemctl {

std::string_view exit_code_name(ExitCode code) {
    switch (code) {
        case ExitCode::ok:
            return "ok";
        case ExitCode::failed:
            return "failed";
        case ExitCode::usage:
            return "usage";
        case ExitCode::unavailable:
            return "unavailable";
        case ExitCode::permission:
            return "permission";
        case ExitCode::interrupted:
            return "interrupted";
        case ExitCode::terminated:
            return "terminated";
    }
    return "failed";
}

std::optional<ExitCode> exit_code_from_number(long long number) {
    for (const ExitCode code : {ExitCode::ok, ExitCode::failed, ExitCode::usage, ExitCode::unavailable,
                                ExitCode::permission, ExitCode::interrupted, ExitCode::terminated}) {
        if (static_cast<long long>(code) == number) return code;
    }
    return std::nullopt;
}

std::string_view problem_kind_name(const Problem& problem) {
    switch (problem.kind) {
        case ProblemKind::input:
            return "input";
        case ProblemKind::busy:
            return "busy";
        case ProblemKind::by_exit_code:
            break;
    }
    return exit_code_name(problem.exit_code);
}

std::optional<ProblemKind> parse_problem_kind(std::string_view name, ExitCode code) {
    if (name == exit_code_name(code)) return ProblemKind::by_exit_code;
    if (name == "input") return ProblemKind::input;
    if (name == "busy") return ProblemKind::busy;
    return std::nullopt;
}

Problem internal_error(std::string_view what) {
    return Problem{
        .exit_code = ExitCode::failed, .message = "internal error: " + std::string(what), .remedy = kReportBugRemedy};
}

Error::Error(ExitCode code, std::string message, std::string remedy)
    : Error(Problem{.exit_code = code, .message = std::move(message), .remedy = std::move(remedy)}) {}

Error::Error(Problem problem) : std::runtime_error(problem.message), problem_(std::move(problem)) {}

}  // namespace cumemctl
