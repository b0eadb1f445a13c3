// The process exit codes of the design: the only numbers cumemctl ever exits with.
#pragma once

#include <optional>
#include <string_view>

namespace cumemctl {

// 0 success; 1 a check or operation failed; 2 usage; 3 unavailable (no driver, device or feature);
// 4 permission denied; 130 and 143 stopped by SIGINT or SIGTERM (128 + the signal, as shells count).
enum class ExitCode : int {
    ok = 0,
    failed = 1,
    usage = 2,
    unavailable = 3,
    permission = 4,
    interrupted = 130,
    terminated = 143
};

// The name used in JSON reports: "ok", "failed", "usage", "unavailable", "permission",
// "interrupted", "terminated".
std::string_view exit_code_name(ExitCode code);

// The exit code of that number, or nothing when the number is none of the documented ones above (a
// number read from another process or a file is checked here before it becomes an ExitCode).
std::optional<ExitCode> exit_code_from_number(long long number);

}  // namespace cumemctl
