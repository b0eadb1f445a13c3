#include "doctor/doctor_results.hpp"

#include <nlohmann/json.hpp>

#include "doctor/summary_line.hpp"
#include "gpu/device/device_selector.hpp"

namespace cumemctl::doctor {

DoctorResults::DoctorResults(DoctorRun run) : run_(std::move(run)), counts_(count_statuses(run_.results)) {}

nlohmann::json DoctorResults::to_json() const {
    nlohmann::json checks = nlohmann::json::array();
    for (const auto& r : run_.results) {
        nlohmann::json check = doctor::to_json(r);
        // A device's check names its GPU as operators do, beside the CUDA ordinal ("device").
        const nlohmann::json id =
            r.device ? gpu::identity_json(identity_of(run_, *r.device)) : nlohmann::json::object();
        for (const char* key : {"uuid", "pci_bus_id", "nvml_index"})
            check[key] = id.value(key, nlohmann::json(nullptr));
        checks.push_back(std::move(check));
    }
    nlohmann::json gpus = nlohmann::json::array();
    for (const auto& id : run_.identities) gpus.push_back(gpu::identity_json(id));
    nlohmann::json summary = nlohmann::json::object();
    for (const CheckStatus s : statuses_worst_first())
        summary[std::string(status_name(s))] = counts_[static_cast<std::size_t>(s)];
    return {{"status", status_name(status())},
            {"summary", std::move(summary)},
            {"seconds", run_.seconds},
            {"level", run_.quick ? "quick" : "full"},
            {"device_count", run_.device_count >= 0 ? nlohmann::json(run_.device_count) : nlohmann::json(nullptr)},
            {"devices", run_.devices},
            {"gpus", std::move(gpus)},
            {"checks", std::move(checks)}};
}

const std::vector<std::string>& DoctorResults::csv_columns() {
    static const std::vector<std::string> columns{"check",  "device", "uuid",   "pci_bus_id", "nvml_index",
                                                  "status", "reason", "remedy", "seconds",    "brief"};
    return columns;
}

std::vector<CsvRow> DoctorResults::csv_rows() const {
    std::vector<CsvRow> rows;
    for (const auto& r : run_.results) {
        CsvRow row{r.check,
                   {},
                   {},
                   {},
                   {},
                   std::string(status_name(r.outcome.status)),
                   r.outcome.reason,
                   r.outcome.remedy,
                   r.seconds,
                   r.outcome.brief};
        if (r.device) {
            const gpu::DeviceIdentity id = identity_of(run_, *r.device);
            row[1] = static_cast<std::int64_t>(*r.device);
            row[2] = id.uuid;
            row[3] = id.pci_bus_id;
            if (id.nvml_index) row[4] = static_cast<std::uint64_t>(*id.nvml_index);
        }
        rows.push_back(std::move(row));
    }
    return rows;
}

nlohmann::json CheckList::to_json() const {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& c : check_catalogue())
        list.push_back(
            {{"check", c.id}, {"scope", scope_name(c.scope)}, {"summary", check_summary(c)}, {"quick", c.quick}});
    return {{"checks", std::move(list)}};
}

std::string DoctorResults::line() const {
    return summary_line(run_);
}

std::vector<Table> CheckList::tables(const Report& /*report*/) const {
    Table t{"doctor checks", {"check", "scope", "what it checks"}, {}, {}, true};
    for (const auto& c : check_catalogue())
        t.rows.push_back({std::string(c.id), std::string(scope_name(c.scope)), check_summary(c)});
    return {t};
}

}  // namespace cumemctl::doctor
