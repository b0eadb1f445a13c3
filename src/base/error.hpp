// One error value for everything that can go wrong: what happened, why, what to do, and the exit code.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "base/exit_code.hpp"

namespace cumemctl {

// A failed driver call: which call, the CUresult number, its name and its description.
struct DriverFailure {
    std::string call;
    int code = 0;
    std::string name;
    std::string text;
};

// One compute process on a GPU, as NVML lists it: what a problem names when other processes hold the
// device (`Problem::held_by`). NVML's pids are the host's (in a container without the host's PID
// namespace they are not this container's).
struct GpuProcess {
    unsigned pid = 0;
    std::optional<std::uint64_t> used;  // nullopt where NVML cannot say (NVML_VALUE_NOT_AVAILABLE)
    std::string name;                   // nvmlSystemGetProcessName, often a path; empty where NVML cannot say
};

// What a problem is where its exit code's name does not say it all.
enum class ProblemKind {
    by_exit_code,  // the exit code's name says it
    input,         // a fleet input that is not a report: exit 2 like a usage error, but not one
    busy,          // exit 3: other processes hold the GPU, named in held_by
};

// A problem as a person reads it: message (what happened), cause (why), remedy (what to do).
// Build it with designated initializers (Problem{.message = ..., .remedy = ...}), never positionally.
// (Every field has an initializer, so that a designated initializer may leave any of them out.)
struct Problem {
    ExitCode exit_code = ExitCode::failed;
    std::string message{};
    std::string cause{};
    std::string remedy{};
    std::optional<DriverFailure> driver{};
    std::optional<int> device{};
    ProblemKind kind = ProblemKind::by_exit_code;  // its JSON "kind": problem_kind_name
    // The processes that hold the device's memory or its exclusive context, where that is why the
    // command could not run (kind "busy"); empty otherwise.
    std::vector<GpuProcess> held_by{};
    // Whether the remedy asks the person to change the request they made (leave out options): a caller
    // that made the request itself, not from a person's options (doctor), words its own remedy.
    bool remedy_changes_request = false;
};

// A problem's JSON "kind": "input", "busy", or its exit code's name.
std::string_view problem_kind_name(const Problem& problem);

// The kind that `name` names beside `code` (its exit code's name: by_exit_code); nullopt for a word that
// is none of them.
std::optional<ProblemKind> parse_problem_kind(std::string_view name, ExitCode code);

// What a person does about a bug in cumemctl.
inline constexpr const char* kReportBugRemedy = "this is a bug in cumemctl; please report it with the command line";

// The one problem of a bug in cumemctl (an exception that is no Error, an answer that cannot be):
// "internal error: WHAT", exit 1, and kReportBugRemedy.
Problem internal_error(std::string_view what);

// The exception that core code throws; commands turn it into a report entry and an exit code.
// Built as Error(code, message, remedy) -- what happened and what to do, the two lines a person reads --
// or, with a cause, from a Problem with designated initializers, in field order:
//     throw Error(Problem{.exit_code = ExitCode::usage, .message = ..., .cause = ..., .remedy = ...});
// There is no positional form with a cause, so a cause and a remedy cannot change places.
class Error : public std::runtime_error {
public:
    Error(ExitCode code, std::string message, std::string remedy = {});
    explicit Error(Problem problem);

    // The problem's message as it is now (a caller that adds to the problem changes it too).
    const char* what() const noexcept override { return problem_.message.c_str(); }
    ExitCode exit_code() const { return problem_.exit_code; }
    const Problem& problem() const { return problem_; }
    Problem& problem() { return problem_; }

private:
    Problem problem_;
};

}  // namespace cumemctl
