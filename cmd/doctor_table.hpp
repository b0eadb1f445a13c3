// doctor's default table, as dcgmi diag prints its results: what did not pass first, worst first, each
// with its reason and remedy (alike results of several GPUs in one row), then a matrix of one row per
// check and one column per GPU (and one for the node's checks), then each GPU's names. --verbose keeps
// the table of every result with its time and reason (cmd/doctor_views.cpp).
#pragma once

#include <string>
#include <vector>

#include "doctor/runner.hpp"
#include "gpu_identity.hpp"  // add_identity_notes, for doctor's tables
#include "report/report.hpp"

namespace cumemctl::cmd {

// The tables, the first titled `title`.
std::vector<Table> doctor_matrix_tables(const doctor::DoctorRun& run, const std::string& title);

}  // namespace cumemctl::cmd
