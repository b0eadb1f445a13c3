// What a failed logical endpoint call means for the person who ran it: the cause behind the CUresult
// (which differs by call: OUT_OF_MEMORY from a bind is bind resources, not memory) and what to do.
#pragma once

#include "base/error.hpp"
#include "cuda/driver_api.hpp"
#include "steps/step_log.hpp"

namespace cumemctl::gpu {

// Fills problem.cause and problem.remedy for `failure`, a failed call of the logical endpoint flow (the
// cuLogicalEndpoint* family and the cuMem* calls that make the bound memory), by its entry point and
// CUresult, the remedy naming the request's settings through setting_name (the running command's
// options, or the core's words). Leaves other results as they are.
void explain_le_failure(Problem& problem, const DriverFailure& failure);

// A StepLog's Diagnoser for the flow: explain_le_failure of a problem that carries its failed call
// (problem.driver).
steps::Diagnoser le_diagnoser();

}  // namespace cumemctl::gpu
