// doctor's run as the table, line and Prometheus renderers draw it: the core's results (doctor_results.hpp)
// with the command's views, which name GPUs as the other commands do (gpu_identity.hpp, gpu_labels.hpp).
#pragma once

#include <string>
#include <vector>

#include "doctor/doctor_results.hpp"
#include "report/report.hpp"

namespace cumemctl::cmd {

class DoctorViews final : public doctor::DoctorResults {
public:
    // `verbose` (--verbose): the table of every result, not the check x GPU matrix.
    DoctorViews(doctor::DoctorRun run, bool verbose) : DoctorResults(std::move(run)), verbose_(verbose) {}

    // The matrix (doctor_table.hpp) or every result, titled with the verdict and the host.
    std::vector<Table> tables(const Report& report) const override;
    // Each check's status and time, the counts, the bandwidth figures and the driver.
    std::vector<Metric> metrics(const Report& report) const override;

private:
    bool verbose_ = false;
};

}  // namespace cumemctl::cmd
