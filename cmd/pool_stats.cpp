// `cumemctl pool-stats`: every pool of this process's device, host, host-NUMA and managed locations,
// and what one pool does under a workload, a release threshold, a reset and being made current.
#include <fmt/format.h>

#include "base/scope_exit.hpp"
#include "command.hpp"
#include "commands.hpp"
#include "gpu/device/devices.hpp"
#include "gpu/pool/pool_overview.hpp"
#include "gpu/device/primary_context.hpp"
#include "gpu_identity.hpp"
#include "held_errors.hpp"
#include "gpu_labels.hpp"
#include "pool_options.hpp"
#include "pool_report.hpp"
#include "pool_stats_results.hpp"
#include "util/size.hpp"
#include "gpu/device/locality.hpp"

namespace cumemctl::cmd {
using namespace gpu;
namespace {

// The options, parsed and checked before the driver is loaded.
struct PoolStatsPlan {
    DeviceList devices;
    PoolChoice choice = PoolChoice::default_pool;
    PoolRequest request;
    std::optional<WorkloadPattern> pattern;
    std::optional<std::uint64_t> threshold;
};

// The options as typed.
struct PoolStatsOptions {
    std::string devices;
    std::string pool;      // --pool default|current|new; empty: not given
    MemoryOptions memory;  // --location, --handle-type
    PoolOptions new_pool;  // --max-size
    bool make_current = false;
    std::string exercise;
    std::string release_threshold;  // a size, or "max" for UINT64_MAX
    bool reset_high = false;

    // Whether one pool is acted on (beyond the overview).
    // A locality domain (--location domain:I) names a pool to act on: its default pool unless --pool says.
    bool acts() const {
        return !pool.empty() || make_current || !exercise.empty() || !release_threshold.empty() || reset_high ||
               memory.location.rfind("domain:", 0) == 0;
    }

    PoolStatsPlan check() const;
};

PoolStatsPlan PoolStatsOptions::check() const {
    const PoolStatsOptions& o = *this;
    PoolStatsPlan p;
    p.devices = parse_device_list(o.devices);
    const PoolSelection selection = pool_selection(o.pool.empty() ? "default" : o.pool, o.memory, o.new_pool);
    p.choice = selection.choice;
    p.request = selection.request;
    if (o.make_current && p.choice != PoolChoice::new_pool) {
        throw Error(ExitCode::usage, "--make-current makes a new pool current", "add --pool new");
    }
    if (!o.exercise.empty()) p.pattern = parse_workload_pattern(o.exercise);
    if (!o.release_threshold.empty()) {
        p.threshold = o.release_threshold == "max" ? kKeepEverything : parse_size(o.release_threshold);
    }
    return p;
}

std::string location_label(const LocationPools& l) {
    const std::string where = pool_location_name(l.location);
    return l.alloc_type == CU_MEM_ALLOCATION_TYPE_MANAGED ? "managed:" + where : where;
}

Table overview_table(const DeviceInfo& d, const std::vector<LocationPools>& pools) {
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
        fmt::format("Pools of this process on GPU {} ({}): the default pool of each location", d.ordinal, d.name),
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
void add_overview_metrics(Report& report, const MetricLabels& gpu, const std::vector<LocationPools>& pools) {
    for (const auto& l : pools) {
        MetricLabels where = gpu;
        where.emplace_back("location", pool_location_name(l.location));
        where.emplace_back("allocation_type", std::string(alloc_type_name(l.alloc_type)));
        report.add_metric("pool_available", "whether a location has a pool of this allocation type here", where,
                          l.unavailable ? 0 : 1);
        if (l.unavailable) continue;
        report.add_metric("pool_current_is_default", "whether the location's current pool is its default pool", where,
                          l.current_is_default ? 1 : 0);
        MetricLabels labels = where;
        labels.emplace_back("pool", "default");
        add_attribute_metrics(report, labels, *l.default_attributes);
        if (!l.current_is_default) {
            labels.back().second = "current";
            add_attribute_metrics(report, labels, *l.current_attributes);
        }
    }
}

// What --make-current shows, as results and as notes of the selected pool's table.
MadeCurrent show_make_current(const DriverApi& api, const PoolInfo& target, const PoolStatsPlan& plan,
                              std::vector<std::string>& notes) {
    // The location's current pool is put back on every way out.
    const PoolInfo before = current_pool(api, target.device, target.location, target.alloc_type);
    const ScopeExit restore([&] {
        try {
            make_current(api, before);
        } catch (const Error&) {
            // Destroying the new pool makes the default current again.
        }
    });
    make_current(api, target);
    MadeCurrent m;
    m.now_current = current_pool(api, target.device, target.location, target.alloc_type).handle == target.handle;
    notes.push_back(
        fmt::format("made current: {}", m.now_current ? "yes" : "no (the driver still returns another pool)"));
    if (is_device_memory(target.location)) {
        const std::uint64_t size = plan.pattern ? plan.pattern->items.front().size : pool_granule(api, target.location);
        const PoolInfo fallback = default_pool(api, target.device, target.location, target.alloc_type);
        const CurrentPoolDraw d = draw_from_current(api, target.handle, fallback.handle, size);
        m.draw = d;
        notes.push_back(
            fmt::format("a plain cuMemAllocAsync of {}: new pool used {} -> {}, default pool used {} -> {}: {}",
                        format_size(d.size), format_size(d.new_used_before), format_size(d.new_used_during),
                        format_size(d.default_used_before), format_size(d.default_used_during),
                        d.drew_from_new() ? "it drew from the new pool" : "it did NOT draw from the new pool"));
    } else {
        notes.push_back("cuMemAllocAsync draws from device pools only: no allocation shown for this location");
    }
    return m;
}

// The pool that --pool names at the --location: looked up, or created (then owned by `owned`).
PoolInfo select_pool(const DriverApi& api, int device, const PoolStatsPlan& plan, const CUmemLocation& location,
                     std::optional<OwnedPool>& owned) {
    if (plan.choice == PoolChoice::new_pool) {
        owned.emplace(api, device, plan.request);
        return owned->info();
    }
    check_pool_support(api, device, location, CU_MEM_HANDLE_TYPE_NONE);
    return plan.choice == PoolChoice::default_pool ? default_pool(api, device, location, CU_MEM_ALLOCATION_TYPE_PINNED)
                                                   : current_pool(api, device, location, CU_MEM_ALLOCATION_TYPE_PINNED);
}

// The selected pool: --release-threshold, then --exercise, --make-current and --reset-high, with its
// attributes at the start and at the end.
SelectedPool act_on_pool(Report& report, const DriverApi& api, int device, const MetricLabels& gpu,
                         const PoolStatsPlan& plan, const PoolStatsOptions& o) {
    const CUmemLocation location = resolve_location(api, plan.request.location, device);
    const bool device_memory = is_device_memory(location);
    std::optional<PrimaryContext> context;
    if (plan.pattern || (o.make_current && device_memory)) context.emplace(api, device);
    std::optional<OwnedPool> owned;
    SelectedPool s;
    s.pool = select_pool(api, device, plan, location, owned);
    s.choice = plan.choice;
    const PoolInfo& target = s.pool;
    if (plan.threshold) set_release_threshold(api, target.handle, *plan.threshold);
    s.at_start = read_pool_attributes(api, target.handle);
    if (plan.request.location.domain) {
        const int domains = device_attribute(api, device, locality::kAttrDomainCount).value_or(1);
        s.placement = pool_placement(api, target.handle, *plan.request.location.domain, domains);
    }
    const std::string name =
        fmt::format("the {} pool at {} (GPU {})", pool_choice_name(plan.choice), pool_location_name(location), device);
    std::optional<Table> workload;
    if (plan.pattern) {
        require_room(api, fmt::format("workload '{}'", plan.pattern->text),
                     pool_footprint(*plan.pattern, pool_granule(api, location)), location, target.max_size.value_or(0));
        s.pattern = plan.pattern;
        s.exercise = run_workload(api, target.handle, *plan.pattern, device_memory);
        MetricLabels labels = gpu;
        labels.emplace_back("location", pool_location_name(location));
        labels.emplace_back("pool", std::string(pool_choice_name(plan.choice)));
        labels.emplace_back("pattern", plan.pattern->text);
        add_workload_metrics(report, labels, *s.exercise);
        workload =
            workload_table(fmt::format("Workload {} on {}", plan.pattern->text, name), *plan.pattern, *s.exercise);
    }
    std::vector<std::string> notes;
    if (o.make_current) s.made_current = show_make_current(api, target, plan, notes);
    if (o.reset_high) reset_high_water_marks(api, target.handle);
    s.at_end = read_pool_attributes(api, target.handle);
    s.high_water_marks_reset = o.reset_high;
    Table t = attributes_table("Selected: " + name,
                               {{"at start", s.at_start}, {o.reset_high ? "at end (reset)" : "at end", s.at_end}});
    t.rows.push_back({"handle types", handle_types_text(target), ""});
    t.rows.push_back({"max size", max_size_text(target), ""});
    if (s.placement) t.rows.push_back({"placement", placement_text(*s.placement), ""});
    t.notes = std::move(notes);
    report.tables.push_back(std::move(t));
    if (workload) report.tables.push_back(std::move(*workload));
    return s;
}

Report run_pool_stats(const PoolStatsOptions& o, const Globals& globals) {
    const NvmlLoad nvml_load = load_nvml_for_identities(globals);
    return run_command(
        "pool-stats", globals, o, [&](Report& report, Driver& driver, int count, const PoolStatsPlan& p) {
            const auto selected = p.devices.select(driver.api(), count, &nvml_load.get());
            // Filled device by device: a device that fails keeps the ones before it, and its own pools.
            const auto results = std::make_shared<PoolStatsResults>();
            report.results = results;
            const std::vector<DeviceIdentity> ids = identities_of(report, globals, driver.api(), nvml_load, selected);
            judging_holds(report, driver.api(), nvml_load.get(), selected, [&] {
                for (int device : selected) {
                    const DeviceIdentity id = identity_in(ids, device);
                    const DeviceInfo d = query_device(driver.api(), device);
                    DevicePools& entry = results->devices.emplace_back(
                        DevicePools{id, d.name, list_location_pools(driver.api(), device), std::nullopt});
                    report.tables.push_back(overview_table(d, entry.pools));
                    report.tables.back().notes.push_back(identity_note(id));
                    const MetricLabels gpu = gpu_labels(id, report.host);
                    add_overview_metrics(report, gpu, entry.pools);
                    if (o.acts()) entry.selected = act_on_pool(report, driver.api(), device, gpu, p, o);
                }
            });
            if (count == 0) report.tables.push_back(Table{"Pools", {}, {}, {"no CUDA device is visible on this node"}});
        });
}

}  // namespace

void register_pool_stats(CLI::App& root, const Globals& globals, Runner& runner) {
    auto opts = std::make_shared<PoolStatsOptions>();
    CLI::App* app = root.add_subcommand(
        "pool-stats", "this process's stream-ordered memory pools, and what one does under a workload");
    add_device_option(*app, opts->devices);
    app->add_option("--pool", opts->pool, "the pool to act on: default, current or new (default: default)");
    add_new_pool_options(*app, opts->memory, opts->new_pool);
    app->add_flag("--make-current", opts->make_current,
                  "make the new pool its location's current pool, and show a plain cuMemAllocAsync draw from it");
    app->add_option("--exercise", opts->exercise,
                    "a workload such as 64x16MiB or 8x1GiB,16x2MiB: allocate, free, synchronise");
    app->add_option("--release-threshold", opts->release_threshold,
                    "set the pool's release threshold first (a size, or max)");
    app->add_flag("--reset-high", opts->reset_high, "reset the pool's high-water marks first");
    app->callback([opts, &globals, &runner] { runner = [opts, &globals] { return run_pool_stats(*opts, globals); }; });
}

}  // namespace cumemctl::cmd
