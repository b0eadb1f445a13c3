// The memtest verdict of one device, with the reasons and the remedy an operator acts on: fail on a
// pattern mismatch, an uncorrectable ECC error during the run, a row remapping failure or a critical
// XID; warn on corrected errors during the run or a pending remap; pass otherwise.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/verdict.hpp"
#include "gpu/memtest/memtest_health.hpp"
#include "gpu/memtest/memtest_run.hpp"

namespace cumemctl::gpu::memtest {

struct Verdict {
    CheckStatus status = CheckStatus::pass;  // pass, warn or fail
    std::vector<std::string> reasons;        // every finding, the worst first; one line when it passed
    std::string remedy;                      // empty when it passed
};

// Judges a run on GPU `gpu` (named `uuid` in remedies); `health` is null where NVML could not watch
// the device.
Verdict judge(const RunResult& run, const HealthWatch* health, int gpu, const std::string& uuid);

// {"status", "reasons", "remedy"}.
nlohmann::json to_json(const Verdict& verdict);

}  // namespace cumemctl::gpu::memtest
