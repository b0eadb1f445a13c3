// doctor's views for people and monitors (DoctorViews): the check x GPU matrix or, with --verbose, the
// table of every result; the Prometheus gauges of each check and of the bandwidth figures.
#include "doctor_views.hpp"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "base/enum_words.hpp"
#include "doctor_table.hpp"
#include "gpu_labels.hpp"
#include "util/duration.hpp"

namespace cumemctl::cmd {
using namespace gpu;
namespace {

using namespace cumemctl::doctor;

// How the summary counts a status: "3 passed".
constexpr auto kCountWords = enum_words<CheckStatus>({{CheckStatus::pass, "passed"},
                                                      {CheckStatus::warn, "warned"},
                                                      {CheckStatus::fail, "failed"},
                                                      {CheckStatus::skip, "skipped"},
                                                      {CheckStatus::busy, "busy"},
                                                      {CheckStatus::timeout, "timed out"}},
                                                     "failed");

std::string_view check_count_word(CheckStatus status) {
    return kCountWords.word(status);
}

// "1 failed, 2 warned, 5 passed": the counts, worst status first.
std::string counts_text(const std::array<int, kStatusCount>& counts) {
    std::vector<std::string> parts;
    for (const CheckStatus s : statuses_worst_first()) {
        const int n = counts[static_cast<std::size_t>(s)];
        if (n > 0) parts.push_back(fmt::format("{} {}", n, check_count_word(s)));
    }
    return parts.empty() ? "no check ran" : fmt::format("{}", fmt::join(parts, ", "));
}

// "cumemctl doctor on gpu001: warn (1 warned, 5 passed; 0.42 s)".
std::string results_title(const DoctorResults& results, const std::string& host) {
    return fmt::format("cumemctl doctor on {}: {} ({}; {})", host, status_name(results.status()),
                       counts_text(results.counts()), format_duration(results.run().seconds));
}

// --verbose: every result with its time and reason, then each GPU's names and the remedies.
Table results_table(const DoctorResults& results, const std::string& host) {
    const DoctorRun& run = results.run();
    Table t;
    t.title = results_title(results, host);
    t.columns = {"status", "check", "gpu", "time", "reason"};
    t.wrap_last = true;
    for (const auto& r : run.results) {
        t.rows.push_back({std::string(status_name(r.outcome.status)), r.check,
                          r.device ? std::to_string(*r.device) : "-", format_duration(r.seconds), r.outcome.reason});
    }
    // One hint per check and remedy, naming the devices it applies to.
    std::vector<std::tuple<std::string, std::string, std::vector<int>>> hints;
    for (const auto& r : run.results) {
        if (r.outcome.status == CheckStatus::pass || r.outcome.remedy.empty()) continue;
        auto it = std::find_if(hints.begin(), hints.end(), [&](const auto& h) {
            return std::get<0>(h) == r.check && std::get<1>(h) == r.outcome.remedy;
        });
        if (it == hints.end()) it = hints.insert(hints.end(), {r.check, r.outcome.remedy, {}});
        if (r.device) std::get<2>(*it).push_back(*r.device);
    }
    if (!run.identities.empty()) t.notes.emplace_back("");
    add_identity_notes(t, run.identities);
    if (!hints.empty()) t.notes.emplace_back("");
    for (const auto& [check, remedy, gpus] : hints) {
        t.notes.push_back(
            fmt::format("{}{}: {}", check, gpus.empty() ? "" : fmt::format(" (gpu {})", fmt::join(gpus, ",")), remedy));
    }
    return t;
}

// A check's labels: the check, and for a device's check its GPU as dcgm-exporter labels it (gpu_labels).
MetricLabels check_labels(const DoctorRun& run, const CheckResult& r, const std::string& host) {
    MetricLabels labels{{"check", r.check}};
    if (!r.device) return labels;
    for (auto& l : gpu_labels(identity_of(run, *r.device), host)) labels.push_back(std::move(l));
    return labels;
}

// The figures of host-bandwidth and memory-bandwidth, with their limit, as `bandwidth` names them.
void add_bandwidth_metrics(Metrics& out, const DoctorRun& run, const std::string& host) {
    for (const auto& r : run.results) {
        if (!r.device || (r.check != kCheckHostBandwidth && r.check != kCheckMemoryBandwidth)) continue;
        // A figure beside another process's work (busy) is that work's, not the GPU's.
        if (r.outcome.status == CheckStatus::busy) continue;
        const auto* copies = r.outcome.evidence_as<CopyEvidence>();
        if (copies == nullptr) continue;
        for (const CopyPath path : {CopyPath::host_to_device, CopyPath::device_to_host, CopyPath::device_to_device}) {
            const std::optional<double> figure = copies->gbps(path);
            if (!figure) continue;
            MetricLabels labels = gpu_labels(identity_of(run, *r.device), host);
            labels.emplace_back("path", path_name(path));
            labels.emplace_back("memory", r.check == kCheckHostBandwidth ? "pinned" : "device");
            const double gbps = *figure;
            out.add("bandwidth_gbps", "a copy path's measured bandwidth, GB/s (1e9 bytes a second)", labels, gbps);
            const std::optional<double> limit = copies->limit();
            if (!limit || *limit <= 0) continue;
            out.add("bandwidth_limit_gbps", "the physical limit of a copy path, GB/s", labels, *limit);
            out.add("bandwidth_ratio", "a copy path's bandwidth as a fraction of its limit", labels, gbps / *limit);
        }
    }
}

void add_doctor_metrics(Metrics& out, const DoctorResults& results, const Report& report) {
    const DoctorRun& run = results.run();
    for (const auto& r : run.results) {
        const MetricLabels base = check_labels(run, r, report.host);
        for (CheckStatus s : kEveryStatus) {
            MetricLabels labels = base;
            labels.emplace_back("status", std::string(status_name(s)));
            out.add("check_status", "a doctor check's status: 1 for the status it has, 0 for the others",
                    std::move(labels), r.outcome.status == s ? 1 : 0);
        }
    }
    for (const auto& r : run.results) {
        out.add("check_duration_seconds", "how long a doctor check took", check_labels(run, r, report.host), r.seconds);
    }
    const auto& counts = results.counts();
    for (CheckStatus s : kEveryStatus) {
        out.add("doctor_checks", "how many doctor checks ended with each status",
                {{"status", std::string(status_name(s))}}, counts[static_cast<std::size_t>(s)]);
    }
    out.add("doctor_duration_seconds", "how long the whole doctor run took", {}, run.seconds);
    add_bandwidth_metrics(out, run, report.host);
    add_driver_info(out, report, run.driver_version);
}

}  // namespace

std::vector<Table> DoctorViews::tables(const Report& report) const {
    if (verbose_) return {results_table(*this, report.host)};
    return doctor_matrix_tables(run(), results_title(*this, report.host));
}

std::vector<Metric> DoctorViews::metrics(const Report& report) const {
    Metrics out;
    add_doctor_metrics(out, *this, report);
    return out.samples;
}

}  // namespace cumemctl::cmd
