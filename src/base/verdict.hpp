// The verdict of anything cumemctl judges (a doctor check, memory health, a GPU's fabric, a memtest run,
// a fabric-matrix cell): one status type with one severity order, and its names.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace cumemctl {

// pass: works; warn: works, but something needs attention; fail: broken; skip: does not apply here
// or could not be tried (the reason says which); busy: could not be tried because other processes,
// which NVML names, hold the device's memory or its exclusive-process context (a job, not a fault);
// timeout: did not finish within the time allowed (a driver or NVML call, or a second process, that
// did not return: the reason names it).
enum class CheckStatus { pass, warn, fail, skip, busy, timeout };
inline constexpr std::size_t kStatusCount = 6;
// Every status, in the order they are declared (the order of their metrics).
inline constexpr std::array<CheckStatus, kStatusCount> kEveryStatus{CheckStatus::pass, CheckStatus::warn,
                                                                    CheckStatus::fail, CheckStatus::skip,
                                                                    CheckStatus::busy, CheckStatus::timeout};

// "pass", "warn", "fail", "skip", "busy", "timeout".
std::string_view status_name(CheckStatus status);
// The status that status_name spells `name`, or none: never a pass for a word that is none of them.
std::optional<CheckStatus> parse_status(std::string_view name);
// How bad a status is, the order every reader of a verdict uses: skip 0 (it says nothing), pass 1,
// warn 2, busy 3, timeout 4, fail 5.
int status_severity(CheckStatus status);
// The worse of two statuses by status_severity.
CheckStatus worse(CheckStatus a, CheckStatus b);
// The statuses, worst first (the order of status_severity).
const std::array<CheckStatus, kStatusCount>& statuses_worst_first();
// Whether a status is evidence of something broken: fail and timeout (a hung call), never busy or warn.
bool status_fails(CheckStatus status);

}  // namespace cumemctl
