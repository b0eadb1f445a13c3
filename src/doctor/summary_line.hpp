// doctor's one-line summary (--format line): a line that fits the 70 characters of a Slurm or NHC drain
// reason, in a stable vocabulary that scripts can match (the manual page lists it):
//   cumemctl: STATUS CHECK [GPU] BRIEF [(+N more)]       the worst result (fail, busy, warn), its GPU
//                                                        as nvidia-smi -i finds it (gpu_name: gpu0)
//   cumemctl: pass N checks on M GPUs [quick]            nothing but passes and skips
#pragma once

#include <cstddef>
#include <string>

#include "doctor/check.hpp"
#include "doctor/runner.hpp"
#include "report/report.hpp"

namespace cumemctl::doctor {

// The widest line: Slurm's and NHC's drain reason.
inline constexpr std::size_t kLineWidth = kSummaryLineWidth;

// A result's few words: its own brief, else its failed driver call ("cuMemCreate OUT_OF_MEMORY"), else
// its reason, else the status's word ("failed", "warning", "busy").
std::string brief_of(const CheckResult& result);

// The line for `run`, at most `width` characters (the brief is cut, never the status, check or count).
std::string summary_line(const DoctorRun& run, std::size_t width = kLineWidth);

}  // namespace cumemctl::doctor
