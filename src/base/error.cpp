#include "base/error.hpp"

#include <utility>

#include "base/enum_words.hpp"

namespace cumemctl {
namespace {

constexpr auto kExitCodeWords = enum_words<ExitCode>({{ExitCode::ok, "ok"},
                                                      {ExitCode::failed, "failed"},
                                                      {ExitCode::usage, "usage"},
                                                      {ExitCode::unavailable, "unavailable"},
                                                      {ExitCode::permission, "permission"},
                                                      {ExitCode::interrupted, "interrupted"},
                                                      {ExitCode::terminated, "terminated"}},
                                                     "failed");

// The kinds with a word of their own; by_exit_code's is its exit code's.
constexpr auto kProblemKindWords =
    enum_words<ProblemKind>({{ProblemKind::input, "input"}, {ProblemKind::busy, "busy"}}, "");

}  // namespace

std::string_view exit_code_name(ExitCode code) {
    return kExitCodeWords.word(code);
}

std::optional<ExitCode> exit_code_from_number(long long number) {
    for (const auto& [code, word] : kExitCodeWords.rows()) {
        if (static_cast<long long>(code) == number) return code;
    }
    return std::nullopt;
}

std::string_view problem_kind_name(const Problem& problem) {
    if (problem.kind == ProblemKind::by_exit_code) return exit_code_name(problem.exit_code);
    return kProblemKindWords.word(problem.kind);
}

std::optional<ProblemKind> parse_problem_kind(std::string_view name, ExitCode code) {
    if (name == exit_code_name(code)) return ProblemKind::by_exit_code;
    return kProblemKindWords.parse(name);
}

Problem internal_error(std::string_view what) {
    return Problem{
        .exit_code = ExitCode::failed, .message = "internal error: " + std::string(what), .remedy = kReportBugRemedy};
}

Error::Error(ExitCode code, std::string message, std::string remedy)
    : Error(Problem{.exit_code = code, .message = std::move(message), .remedy = std::move(remedy)}) {}

Error::Error(Problem problem) : std::runtime_error(problem.message), problem_(std::move(problem)) {}

}  // namespace cumemctl
