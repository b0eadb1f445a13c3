#include "memtest_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpu_identity.hpp"
#include "gpu_labels.hpp"
#include "memtest_results.hpp"
#include "steps/step_json.hpp"
#include "util/duration.hpp"
#include "util/size.hpp"

namespace cumemctl::cmd {
using namespace gpu::memtest;
namespace {

std::string word_hex(std::uint64_t lo, std::uint64_t hi) {
    return fmt::format("0x{:016x}{:016x}", hi, lo);  // the word as one 128-bit number: byte 15 first
}

nlohmann::json mismatch_json(const Mismatch& m) {
    return {{"pattern", m.pattern},
            {"pass", m.pass},
            {"chunk", m.chunk},
            {"offset", m.offset},
            {"expected", word_hex(m.expected_lo, m.expected_hi)},
            {"actual", word_hex(m.actual_lo, m.actual_hi)},
            {"bits", m.bits()}};
}

nlohmann::json pattern_json(const PatternResult& r) {
    return {{"pattern", r.pattern}, {"pass", r.pass},   {"bytes", r.bytes},          {"traffic_bytes", r.traffic},
            {"seconds", r.seconds}, {"gbps", r.gbps()}, {"mismatches", r.mismatches}};
}

nlohmann::json problem_or_null(const std::optional<Problem>& p) {
    return p ? to_json(*p) : nlohmann::json(nullptr);
}

std::string delta_text(const std::optional<long long>& d) {
    if (!d) return "unknown";
    return *d == 0 ? "0" : fmt::format("{:+d}", *d);
}

}  // namespace

nlohmann::json memtest_device_json(const DeviceMemtest& d, std::uint64_t leave, unsigned max_records) {
    nlohmann::json patterns = nlohmann::json::array(), mismatches = nlohmann::json::array();
    for (const auto& r : d.run.done) patterns.push_back(pattern_json(r));
    for (const auto& m : d.run.recorded) mismatches.push_back(mismatch_json(m));
    nlohmann::json j{
        {"ordinal", d.ordinal},
        {"uuid", d.uuid},
        {"name", d.name},
        {"free_at_start_bytes", d.free_at_start},
        {"leave_bytes", leave},
        {"target_bytes", d.target},
        {"tested_bytes", d.tested},
        {"coverage", d.coverage()},
        {"size_capped", d.size_capped},
        {"granularity_bytes", d.granularity},
        {"chunk_bytes", d.chunk},
        {"chunks", d.chunks},
        {"allocation_shortfall", problem_or_null(d.shortfall)},
        {"patterns", patterns},
        {"not_run", d.run.not_run},
        {"time_budget_ran_out", d.run.budget_ran_out},
        {"yielded", d.run.yielded.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.run.yielded)},
        {"stopped_in", d.run.stopped_in.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.run.stopped_in)},
        {"mismatches", d.run.mismatches},
        {"mismatch_list", mismatches},
        {"mismatch_list_cut", d.run.recorded.size() < d.run.mismatches},
        {"max_mismatches_listed", max_records},
        {"pattern_seconds", d.run.seconds},
        {"seconds", d.seconds},
        {"verdict", to_json(d.verdict)},
        {"steps", steps_json(d.steps)}};
    j["nvml_free_at_start_bytes"] =
        d.nvml_free_at_start ? nlohmann::json(*d.nvml_free_at_start) : nlohmann::json(nullptr);
    j["coverage_of_nvml_free"] =
        d.nvml_free_at_start && *d.nvml_free_at_start > 0
            ? nlohmann::json(static_cast<double>(d.tested) / static_cast<double>(*d.nvml_free_at_start))
            : nlohmann::json(nullptr);
    j["nvml"] = d.health ? to_json(*d.health) : nlohmann::json(nullptr);
    nlohmann::json others = nlohmann::json::array();
    for (const auto& p : d.other_processes) others.push_back(to_json(p));
    j["other_processes"] = others;
    j["processes_unavailable"] =
        d.processes_unavailable.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.processes_unavailable);
    j["nvml_unavailable"] = d.nvml_unavailable.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.nvml_unavailable);
    return j;
}

namespace {

void add_memtest_tables(std::vector<Table>& tables, const DeviceMemtest& d, std::uint64_t seed,
                        const gpu::DeviceIdentity& id) {
    Table t{fmt::format("Memtest on GPU {} ({})", d.ordinal, d.uuid),
            {"pattern", "pass", "GB/s", "time", "mismatches"},
            {},
            {}};
    for (const auto& r : d.run.done) {
        t.rows.push_back({r.pattern, std::to_string(r.pass), fmt::format("{:.0f}", r.gbps()),
                          format_duration(r.seconds), std::to_string(r.mismatches)});
    }
    const char* why_not = d.run.yielded.empty() ? "not run (time budget)" : "not run (memory given back)";
    for (const auto& n : d.run.not_run) t.rows.push_back({n, "", "", "", why_not});
    t.notes.push_back(fmt::format("tested {} of {} free at the start ({:.2f}%) in {} chunk{} of {}; random seed {}",
                                  format_size(d.tested), format_size(d.free_at_start), 100 * d.coverage(), d.chunks,
                                  d.chunks == 1 ? "" : "s", format_size(d.chunk), seed));
    t.notes.push_back("GB/s counts bytes read plus written");
    t.notes.push_back(identity_note(id));
    if (d.shortfall) t.notes.push_back(d.shortfall->message);
    if (!d.run.stopped_in.empty()) t.notes.push_back(fmt::format("stopped by a signal in {}", d.run.stopped_in));
    if (d.health) {
        const HealthWatch& h = *d.health;
        t.notes.push_back(
            fmt::format("NVML during the run: corrected ECC {}, uncorrected ECC {} (volatile); XIDs {}{}",
                        delta_text(delta(h.before.ecc_corrected_volatile, h.after.ecc_corrected_volatile)),
                        delta_text(delta(h.before.ecc_uncorrected_volatile, h.after.ecc_uncorrected_volatile)),
                        h.xids.empty() ? "none" : fmt::format("{}", fmt::join(h.xids, ", ")),
                        h.xid_unavailable.empty() ? "" : fmt::format(" (not watched: {})", h.xid_unavailable)));
        if (h.after.remapped_rows) {
            const auto& r = *h.after.remapped_rows;
            t.notes.push_back(
                fmt::format("remapped rows after: {} correctable, {} uncorrectable, pending {}, failure {}",
                            r.corrected, r.uncorrected, r.pending ? "yes" : "no", r.failure ? "yes" : "no"));
        }
    } else {
        t.notes.push_back(fmt::format("NVML: {}", d.nvml_unavailable));
    }
    t.notes.push_back(
        fmt::format("verdict: {}: {}", status_name(d.verdict.status), fmt::join(d.verdict.reasons, "; ")));
    if (!d.verdict.remedy.empty()) t.notes.push_back("remedy: " + d.verdict.remedy);
    t.wrap_last = true;
    tables.push_back(std::move(t));
    if (d.run.mismatches == 0) return;
    Table m{fmt::format("Mismatches on GPU {}", d.ordinal),
            {"pattern", "chunk", "offset", "expected", "actual", "bits"},
            {},
            {}};
    for (const auto& x : d.run.recorded) {
        m.rows.push_back({fmt::format("{} {}", x.pattern, x.pass), std::to_string(x.chunk),
                          fmt::format("{:#x}", x.offset), word_hex(x.expected_lo, x.expected_hi),
                          word_hex(x.actual_lo, x.actual_hi), fmt::format("{}", fmt::join(x.bits(), ","))});
    }
    if (d.run.recorded.size() < d.run.mismatches) {
        m.notes.push_back(fmt::format("{} mismatching words in all; the first {} of each pattern pass are listed",
                                      d.run.mismatches, d.run.recorded.size()));
    }
    tables.push_back(std::move(m));
}

void add_memtest_metrics(Metrics& out, const DeviceMemtest& d, const MetricLabels& labels) {
    out.add("memtest_free_at_start_bytes", "free device memory when memtest began", labels,
            static_cast<double>(d.free_at_start));
    out.add("memtest_tested_bytes", "device memory memtest tested", labels, static_cast<double>(d.tested));
    out.add("memtest_coverage_ratio", "bytes tested over free memory at the start", labels, d.coverage());
    out.add("memtest_mismatched_words", "16-byte words that held something other than what was written", labels,
            static_cast<double>(d.run.mismatches));
    out.add("memtest_status", "the verdict: 0 pass, 1 warn, 2 fail", labels,
            static_cast<double>(static_cast<int>(d.verdict.status)));
    out.add("memtest_duration_seconds", "the whole memtest of the device, seconds", labels, d.seconds);
    for (const auto& r : d.run.done) {
        MetricLabels l = labels;
        l.emplace_back("pattern", r.pattern);
        l.emplace_back("pass", std::to_string(r.pass));
        out.add("memtest_pattern_bytes_per_second", "a pattern pass's bytes read plus written per second", l,
                r.gbps() * 1e9);
        out.add("memtest_pattern_duration_seconds", "a pattern pass's time on the device, seconds", l, r.seconds);
    }
    if (!d.health) return;
    const auto& h = *d.health;
    auto gauge = [&](const char* name, const char* help, const std::optional<long long>& v) {
        if (v) out.add(name, help, labels, static_cast<double>(*v));
    };
    gauge("memtest_ecc_corrected_errors", "corrected ECC errors during the run (volatile)",
          delta(h.before.ecc_corrected_volatile, h.after.ecc_corrected_volatile));
    gauge("memtest_ecc_uncorrected_errors", "uncorrectable ECC errors during the run (volatile)",
          delta(h.before.ecc_uncorrected_volatile, h.after.ecc_uncorrected_volatile));
    out.add("memtest_xid_events", "XID events NVML delivered during the run", labels,
            static_cast<double>(h.xids.size()));
}

}  // namespace

std::vector<Table> MemtestResults::tables(const Report& /*report*/) const {
    std::vector<Table> tables;
    for (const MemtestDevice& d : devices) add_memtest_tables(tables, d.run, seed, d.id);
    return tables;
}

std::vector<Metric> MemtestResults::metrics(const Report& report) const {
    Metrics out;
    for (const MemtestDevice& d : devices) add_memtest_metrics(out, d.run, gpu_labels(d.id, report.host));
    return out.samples;
}

}  // namespace cumemctl::cmd
