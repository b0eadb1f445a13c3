#include "pool_report.hpp"
#include "util/duration.hpp"

#include <fmt/format.h>

#include "gpu/device/devices.hpp"
#include "util/size.hpp"

namespace cumemctl::cmd {
using namespace gpu;
namespace {

std::string yes_no(bool b) {
    return b ? "yes" : "no";
}

double rate(std::uint64_t n, double seconds) {
    return seconds > 0 ? static_cast<double>(n) / seconds : 0.0;
}

nlohmann::json snapshot_json(const PoolSnapshot& s) {
    nlohmann::json j = attributes_json(s.pool);
    j["device_free_bytes"] = s.device_free ? nlohmann::json(*s.device_free) : nlohmann::json(nullptr);
    return j;
}

std::string seconds_text(double s) {
    return format_duration(s);
}

}  // namespace

nlohmann::json attributes_json(const PoolAttributes& a) {
    return {{"reserved_bytes", a.reserved_current},
            {"reserved_high_bytes", a.reserved_high},
            {"used_bytes", a.used_current},
            {"used_high_bytes", a.used_high},
            {"release_threshold_bytes", a.release_threshold},
            {"reuse_follow_event_dependencies", a.reuse_follow_event_dependencies},
            {"reuse_allow_opportunistic", a.reuse_allow_opportunistic},
            {"reuse_allow_internal_dependencies", a.reuse_allow_internal_dependencies}};
}

nlohmann::json pool_info_json(const PoolInfo& p) {
    nlohmann::json j{{"device", p.device},
                     {"location", pool_location_name(p.location)},
                     {"allocation_type", alloc_type_name(p.alloc_type)},
                     {"queried_with", p.queried_with}};
    j["handle_types"] =
        p.handle_types ? nlohmann::json(handle_type_names(static_cast<int>(*p.handle_types))) : nlohmann::json(nullptr);
    j["max_size_bytes"] = p.max_size ? nlohmann::json(*p.max_size) : nlohmann::json(nullptr);
    return j;
}

nlohmann::json workload_json(const WorkloadPattern& pattern, const WorkloadResult& w) {
    const ThresholdOutcome t = threshold_outcome(w);
    return {{"pattern", pattern.text},
            {"allocations", w.allocations},
            {"bytes", w.bytes},
            {"before", snapshot_json(w.before)},
            {"after_alloc", snapshot_json(w.after_alloc)},
            {"after_free", snapshot_json(w.after_free)},
            {"after_sync", snapshot_json(w.after_sync)},
            {"alloc_seconds", w.alloc_seconds},
            {"free_seconds", w.free_seconds},
            {"sync_seconds", w.sync_seconds},
            {"allocs_per_second", rate(w.allocations, w.alloc_seconds)},
            {"frees_per_second", rate(w.allocations, w.free_seconds)},
            {"threshold",
             {{"release_threshold_bytes", w.after_free.pool.release_threshold},
              {"keeps_all", t.keeps_all},
              {"expected_reserved_at_most_bytes", t.expected_at_most},
              {"holds", t.holds}}}};
}

Table attributes_table(std::string title, const std::vector<std::pair<std::string, PoolAttributes>>& columns) {
    Table t;
    t.title = std::move(title);
    t.columns.push_back("");
    for (const auto& c : columns) t.columns.push_back(c.first);
    auto row = [&](std::string label, auto cell) {
        std::vector<TableCell> r{std::move(label)};
        for (const auto& c : columns) r.emplace_back(cell(c.second));
        t.rows.push_back(std::move(r));
    };
    row("reserved", [](const PoolAttributes& a) { return format_size(a.reserved_current); });
    row("reserved high", [](const PoolAttributes& a) { return format_size(a.reserved_high); });
    row("used", [](const PoolAttributes& a) { return format_size(a.used_current); });
    row("used high", [](const PoolAttributes& a) { return format_size(a.used_high); });
    row("release threshold", [](const PoolAttributes& a) { return threshold_text(a.release_threshold); });
    // Labels short enough that six locations fit 100 columns beside them.
    row("reuse: event dependencies", [](const PoolAttributes& a) { return yes_no(a.reuse_follow_event_dependencies); });
    row("reuse: opportunistic", [](const PoolAttributes& a) { return yes_no(a.reuse_allow_opportunistic); });
    row("reuse: adds dependencies",
        [](const PoolAttributes& a) { return yes_no(a.reuse_allow_internal_dependencies); });
    t.wrap_last = true;  // the notes wrap to the width
    return t;
}

Table workload_table(std::string title, const WorkloadPattern& pattern, const WorkloadResult& w) {
    Table t = attributes_table(std::move(title), {{"before", w.before.pool},
                                                  {"after alloc", w.after_alloc.pool},
                                                  {"after free", w.after_free.pool},
                                                  {"after sync", w.after_sync.pool}});
    t.rows.resize(4);  // sizes only: the threshold and policies do not move during a workload
    if (w.before.device_free) {
        std::vector<TableCell> r{"device free"};
        for (const PoolSnapshot* s : {&w.before, &w.after_alloc, &w.after_free, &w.after_sync}) {
            r.push_back(s->device_free ? format_size(*s->device_free) : "unknown");
        }
        t.rows.push_back(std::move(r));
    }
    t.notes.push_back(fmt::format("{}: {} allocations, {} in all", pattern.text, w.allocations, format_size(w.bytes)));
    t.notes.push_back(
        fmt::format("alloc {} ({:.0f}/s, with a stream synchronisation); free {} ({:.0f}/s, enqueued); "
                    "sync {}",
                    seconds_text(w.alloc_seconds), rate(w.allocations, w.alloc_seconds), seconds_text(w.free_seconds),
                    rate(w.allocations, w.free_seconds), seconds_text(w.sync_seconds)));
    const ThresholdOutcome o = threshold_outcome(w);
    const std::string threshold = threshold_text(w.after_free.pool.release_threshold);
    t.notes.push_back(
        o.keeps_all
            ? fmt::format("release threshold {}: the pool keeps all {} it reserved at synchronisation ({})", threshold,
                          format_size(w.after_free.pool.reserved_current), o.holds ? "it did" : "it did not")
            : fmt::format("release threshold {}: at synchronisation the pool releases unused memory down "
                          "to at most {} ({}: {} reserved)",
                          threshold, format_size(o.expected_at_most), o.holds ? "it did" : "it did not",
                          format_size(w.after_sync.pool.reserved_current)));
    return t;
}

namespace {

// `labels` with one more pair.
MetricLabels with(MetricLabels labels, std::string key, std::string value) {
    labels.emplace_back(std::move(key), std::move(value));
    return labels;
}

}  // namespace

void add_attribute_metrics(Metrics& out, const MetricLabels& labels, const PoolAttributes& a) {
    const auto gauge = [&](const char* name, const char* help, double value, const MetricLabels& l) {
        out.add(name, std::string(help) + " (this cumemctl process's pool: statistics are per process)", l, value);
    };
    gauge("pool_reserved_bytes", "memory a pool has reserved, bytes", static_cast<double>(a.reserved_current), labels);
    gauge("pool_reserved_high_bytes", "the high-water mark of a pool's reserved memory, bytes",
          static_cast<double>(a.reserved_high), labels);
    gauge("pool_used_bytes", "memory of a pool in use, bytes", static_cast<double>(a.used_current), labels);
    gauge("pool_used_high_bytes", "the high-water mark of a pool's memory in use, bytes",
          static_cast<double>(a.used_high), labels);
    gauge("pool_release_threshold_bytes", "a pool's release threshold, bytes", static_cast<double>(a.release_threshold),
          labels);
    for (const auto& [policy, on] : {std::pair{"follow_event_dependencies", a.reuse_follow_event_dependencies},
                                     std::pair{"allow_opportunistic", a.reuse_allow_opportunistic},
                                     std::pair{"allow_internal_dependencies", a.reuse_allow_internal_dependencies}}) {
        gauge("pool_reuse_policy", "whether a pool's reuse policy is on", on ? 1 : 0, with(labels, "policy", policy));
    }
}

void add_workload_metrics(Metrics& out, const MetricLabels& labels, const WorkloadResult& w) {
    const std::string note = " (this cumemctl process's pool: statistics are per process)";
    for (const auto& [phase, s] : {std::pair{"before", &w.before}, std::pair{"after_alloc", &w.after_alloc},
                                   std::pair{"after_free", &w.after_free}, std::pair{"after_sync", &w.after_sync}}) {
        out.add("pool_workload_reserved_bytes", "memory the pool had reserved at a moment of the workload" + note,
                with(labels, "phase", phase), static_cast<double>(s->pool.reserved_current));
        out.add("pool_workload_used_bytes", "memory of the pool in use at a moment of the workload" + note,
                with(labels, "phase", phase), static_cast<double>(s->pool.used_current));
    }
    for (const auto& [step, seconds] :
         {std::pair{"alloc", w.alloc_seconds}, std::pair{"free", w.free_seconds}, std::pair{"sync", w.sync_seconds}}) {
        out.add("pool_workload_seconds", "how long a step of the workload took", with(labels, "step", step), seconds);
    }
    out.add("pool_workload_allocations", "how many allocations the workload made", labels,
            static_cast<double>(w.allocations));
}

std::string handle_types_text(const PoolInfo& p) {
    return p.handle_types ? handle_type_name(*p.handle_types) : "unknown";
}

std::string max_size_text(const PoolInfo& p) {
    if (!p.max_size) return "unknown";
    return *p.max_size == 0 ? "driver default" : format_size(*p.max_size);
}

std::string threshold_text(std::uint64_t threshold) {
    return threshold == kKeepEverything ? "UINT64_MAX (keep everything)" : format_size(threshold);
}

}  // namespace cumemctl::cmd
