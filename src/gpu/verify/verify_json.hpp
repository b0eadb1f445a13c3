// A verify result as JSON, for reports and for the import check's child process to send its result.
#pragma once

#include <nlohmann/json.hpp>

#include "gpu/verify/verify.hpp"

namespace cumemctl::gpu {

// {"bytes", "mismatches", "first_mismatch_offset" (null when none), "fill_seconds", "check_seconds",
// "fill_gbps", "check_gbps", "ok"}.
nlohmann::json to_json(const VerifyResult& result);

// The inverse of to_json; throws nlohmann::json::exception on a malformed document.
VerifyResult verify_result_from_json(const nlohmann::json& j);

}  // namespace cumemctl::gpu
