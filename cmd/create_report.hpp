// create's report: its CreateResult as JSON results and tables, with warnings for what was asked and
// not granted and for resources that differ before and after.
#pragma once

#include "gpu/vmm_create.hpp"
#include "report/report.hpp"

namespace cumemctl::cmd {

// Fills report.results and report.tables from what create did (also after a failure), and adds
// warnings: compression asked for and not granted; free memory or descriptors that differ.
void fill_create_report(Report& report, const CreateRequest& request, const CreateResult& result);

}  // namespace cumemctl::cmd
