// pool-stats' views (PoolStatsResults): each GPU's pools at every location, the selected pool before and
// after what was done to it, its workload; and the same as Prometheus gauges.
#include <fmt/format.h>

#include "gpu_identity.hpp"
#include "gpu_labels.hpp"
#include "pool_report.hpp"
#include "pool_stats_results.hpp"
#include "util/size.hpp"

namespace cumemctl::cmd {
using namespace gpu;
namespace {

std::string location_label(const LocationPools& l) {
    const std::string where = pool_location_name(l.location);
    return l.alloc_type == CU_MEM_ALLOCATION_TYPE_MANAGED ? "managed:" + where : where;
}

Table overview_table(const DevicePools& d) {
    const std::vector<LocationPools>& pools = d.pools;
    std::vector<std::pair<std::string, PoolAttributes>> columns;
    std::vector<std::string> notes;
    for (const auto& l : pools) {
        if (l.unavailable) {
            notes.push_back(fmt::format("{}: no pool ({})", location_label(l), l.unavailable->message));
            continue;
        }
        columns.emplace_back(location_label(l) + (l.current_is_default ? "" : " default"), *l.default_attributes);
        if (!l.current_is_default) columns.emplace_back(location_label(l) + " current", *l.current_attributes);
    }
    Table t = attributes_table(
        fmt::format("Pools of this process on GPU {} ({}): the default pool of each location", d.id.ordinal, d.name),
        columns);
    std::vector<TableCell> current{"current is the default"};
    for (const auto& l : pools) {
        if (l.unavailable) continue;
        current.push_back(l.current_is_default ? "yes" : "no");
        if (!l.current_is_default) current.push_back("no");
    }
    t.rows.push_back(std::move(current));
    t.notes = std::move(notes);
    t.notes.push_back(kPerProcessNote);
    return t;
}

// The overview as Prometheus gauges: per location whether it has a pool, whether the current pool is
// the default one, and the attributes of each.
// `gpu`: the GPU's labels (gpu_labels), as dcgm-exporter names them.
void add_overview_metrics(Metrics& out, const MetricLabels& gpu, const std::vector<LocationPools>& pools) {
    for (const auto& l : pools) {
        MetricLabels where = gpu;
        where.emplace_back("location", pool_location_name(l.location));
        where.emplace_back("allocation_type", std::string(alloc_type_name(l.alloc_type)));
        out.add("pool_available", "whether a location has a pool of this allocation type here", where,
                l.unavailable ? 0 : 1);
        if (l.unavailable) continue;
        out.add("pool_current_is_default", "whether the location's current pool is its default pool", where,
                l.current_is_default ? 1 : 0);
        MetricLabels labels = where;
        labels.emplace_back("pool", "default");
        add_attribute_metrics(out, labels, *l.default_attributes);
        if (!l.current_is_default) {
            labels.back().second = "current";
            add_attribute_metrics(out, labels, *l.current_attributes);
        }
    }
}

// "the new pool at device (GPU 0)": the selected pool, as its tables' titles name it.
std::string selected_name(const SelectedPool& s, int device) {
    return fmt::format("the {} pool at {} (GPU {})", pool_choice_name(s.choice), pool_location_name(s.pool.location),
                       device);
}

// What --make-current showed, as notes under the selected pool's table.
std::vector<std::string> made_current_notes(const MadeCurrent& m) {
    std::vector<std::string> notes;
    notes.push_back(
        fmt::format("made current: {}", m.now_current ? "yes" : "no (the driver still returns another pool)"));
    if (const auto& d = m.draw) {
        notes.push_back(
            fmt::format("a plain cuMemAllocAsync of {}: new pool used {} -> {}, default pool used {} -> {}: {}",
                        format_size(d->size), format_size(d->new_used_before), format_size(d->new_used_during),
                        format_size(d->default_used_before), format_size(d->default_used_during),
                        d->drew_from_new() ? "it drew from the new pool" : "it did NOT draw from the new pool"));
    } else {
        notes.push_back("cuMemAllocAsync draws from device pools only: no allocation shown for this location");
    }
    return notes;
}

// The selected pool at the start and at the end, then its workload's table.
void add_selected_tables(std::vector<Table>& tables, const SelectedPool& s, int device) {
    const std::string name = selected_name(s, device);
    Table t = attributes_table(
        "Selected: " + name,
        {{"at start", s.at_start}, {s.high_water_marks_reset ? "at end (reset)" : "at end", s.at_end}});
    t.rows.push_back({"handle types", handle_types_text(s.pool), ""});
    t.rows.push_back({"max size", max_size_text(s.pool), ""});
    if (s.placement) t.rows.push_back({"placement", placement_text(*s.placement), ""});
    if (s.made_current) t.notes = made_current_notes(*s.made_current);
    tables.push_back(std::move(t));
    if (s.pattern && s.exercise)
        tables.push_back(
            workload_table(fmt::format("Workload {} on {}", s.pattern->text, name), *s.pattern, *s.exercise));
}

}  // namespace

std::vector<Table> PoolStatsResults::tables(const Report& /*report*/) const {
    std::vector<Table> tables;
    for (const DevicePools& d : devices) {
        tables.push_back(overview_table(d));
        tables.back().notes.push_back(identity_note(d.id));
        if (d.selected) add_selected_tables(tables, *d.selected, d.id.ordinal);
    }
    if (device_count == 0) tables.push_back(Table{"Pools", {}, {}, {"no CUDA device is visible on this node"}});
    return tables;
}

std::vector<Metric> PoolStatsResults::metrics(const Report& report) const {
    Metrics out;
    for (const DevicePools& d : devices) {
        const MetricLabels gpu = gpu_labels(d.id, report.host);
        add_overview_metrics(out, gpu, d.pools);
        if (!d.selected || !d.selected->pattern || !d.selected->exercise) continue;
        const SelectedPool& s = *d.selected;
        MetricLabels labels = gpu;
        labels.emplace_back("location", pool_location_name(s.pool.location));
        labels.emplace_back("pool", std::string(pool_choice_name(s.choice)));
        labels.emplace_back("pattern", s.pattern->text);
        add_workload_metrics(out, labels, *s.exercise);
    }
    return out.samples;
}

}  // namespace cumemctl::cmd
