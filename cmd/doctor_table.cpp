#include "doctor_table.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace cumemctl::cmd {
namespace {

using doctor::CheckResult;
using doctor::CheckStatus;

// Results alike but for their GPU: one row of the table of what did not pass.
struct Finding {
    const CheckResult* first;
    std::vector<int> gpus;
};

std::string gpu_list(const std::vector<int>& gpus) {
    return gpus.empty() ? "-" : fmt::format("{}", fmt::join(gpus, ","));
}

// What did not pass, worst first, then in the order the checks ran; each with its remedy on the row
// below it.
Table findings_table(const doctor::DoctorRun& run, const std::string& title) {
    std::vector<Finding> findings;
    for (const auto& r : run.results) {
        if (r.outcome.status == CheckStatus::pass) continue;
        auto it = std::find_if(findings.begin(), findings.end(), [&](const Finding& f) {
            const auto& o = f.first->outcome;
            return f.first->check == r.check && o.status == r.outcome.status && o.reason == r.outcome.reason &&
                   o.remedy == r.outcome.remedy && f.first->device.has_value() == r.device.has_value();
        });
        if (it == findings.end()) it = findings.insert(findings.end(), Finding{&r, {}});
        if (r.device) it->gpus.push_back(*r.device);
    }
    std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
        return doctor::status_severity(a.first->outcome.status) > doctor::status_severity(b.first->outcome.status);
    });
    Table t{title, {"status", "check", "gpu", "what did not pass"}, {}, {}, true};
    for (const auto& f : findings) {
        const auto& o = f.first->outcome;
        t.rows.push_back({{std::string(doctor::status_name(o.status)), tone_of(o.status)},
                          f.first->check,
                          gpu_list(f.gpus),
                          o.reason});
        if (!o.remedy.empty() && o.status != CheckStatus::skip) t.rows.push_back({"", "", "", "remedy: " + o.remedy});
    }
    if (t.rows.empty()) t.columns.clear();
    return t;
}

// One row per check, one column per GPU and one for the node's checks: each cell the check's status
// there, blank where it did not run.
Table matrix_table(const doctor::DoctorRun& run) {
    std::vector<std::string> checks;
    bool node_column = false;
    for (const auto& r : run.results) {
        if (std::find(checks.begin(), checks.end(), r.check) == checks.end()) checks.push_back(r.check);
        node_column = node_column || !r.device;
    }
    Table t;
    t.columns.emplace_back("check");
    if (node_column) t.columns.emplace_back("node");
    for (int d : run.devices) t.columns.push_back(fmt::format("gpu{}", d));
    for (const auto& check : checks) {
        std::vector<TableCell> row{check};
        auto status_at = [&](std::optional<int> device) {
            for (const auto& r : run.results) {
                if (r.check == check && r.device == device)
                    return TableCell(std::string(doctor::status_name(r.outcome.status)), tone_of(r.outcome.status));
            }
            return TableCell(std::string());
        };
        if (node_column) row.push_back(status_at(std::nullopt));
        for (int d : run.devices) row.push_back(status_at(d));
        t.rows.push_back(std::move(row));
    }
    if (!run.identities.empty()) {
        t.notes.emplace_back("");
        t.notes.emplace_back("gpu N: the CUDA ordinal; nvidiaN: nvidia-smi's index N, as the drain reason names it");
    }
    add_identity_notes(t, run.identities);
    return t;
}

}  // namespace

std::vector<Table> doctor_matrix_tables(const doctor::DoctorRun& run, const std::string& title) {
    std::vector<Table> tables;
    Table findings = findings_table(run, title);
    Table matrix = matrix_table(run);
    if (findings.rows.empty()) {
        matrix.title = title;
        tables.push_back(std::move(matrix));
        return tables;
    }
    tables.push_back(std::move(findings));
    if (!matrix.rows.empty()) tables.push_back(std::move(matrix));
    return tables;
}

}  // namespace cumemctl::cmd
