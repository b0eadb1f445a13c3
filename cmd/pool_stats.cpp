// `cumemctl pool-stats`: every pool of this process's device, host, host-NUMA and managed locations,
// and what one pool does under a workload, a release threshold, a reset and being made current.
#include <fmt/format.h>

#include "base/scope_exit.hpp"
#include "command.hpp"
#include "gpu/device/devices.hpp"
#include "gpu/pool/pool_overview.hpp"
#include "gpu/device/primary_context.hpp"
#include "gpu_identity.hpp"
#include "held_errors.hpp"
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

// What --make-current shows (pool_stats_views.cpp words it under the selected pool's table).
MadeCurrent show_make_current(const DriverApi& api, const PoolInfo& target, const PoolStatsPlan& plan) {
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
    if (is_device_memory(target.location)) {
        const std::uint64_t size = plan.pattern ? plan.pattern->items.front().size : pool_granule(api, target.location);
        const PoolInfo fallback = default_pool(api, target.device, target.location, target.alloc_type);
        m.draw = draw_from_current(api, target.handle, fallback.handle, size);
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
SelectedPool act_on_pool(const DriverApi& api, int device, const PoolStatsPlan& plan, const PoolStatsOptions& o) {
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
    if (plan.pattern) {
        require_room(api, fmt::format("workload '{}'", plan.pattern->text),
                     pool_footprint(*plan.pattern, pool_granule(api, location)), location, target.max_size.value_or(0));
        s.pattern = plan.pattern;
        s.exercise = run_workload(api, target.handle, *plan.pattern, device_memory);
    }
    if (o.make_current) s.made_current = show_make_current(api, target, plan);
    if (o.reset_high) reset_high_water_marks(api, target.handle);
    s.at_end = read_pool_attributes(api, target.handle);
    s.high_water_marks_reset = o.reset_high;
    return s;
}

Report run_pool_stats(const PoolStatsOptions& o, const Globals& globals) {
    const NvmlLoad nvml_load = load_nvml_for_identities(globals);
    return run_command(
        "pool-stats", globals, o, [&](Report& report, Driver& driver, int count, const PoolStatsPlan& p) {
            const auto selected = p.devices.select(driver.api(), count, &nvml_load.get());
            // Filled device by device: a device that fails keeps the ones before it, and its own pools.
            const auto results = std::make_shared<PoolStatsResults>();
            results->device_count = count;
            report.results = results;
            const std::vector<DeviceIdentity> ids = identities_of(report, globals, driver.api(), nvml_load, selected);
            judging_holds(report, driver.api(), nvml_load.get(), selected, [&] {
                for (int device : selected) {
                    const DeviceIdentity id = identity_in(ids, device);
                    const DeviceInfo d = query_device(driver.api(), device);
                    DevicePools& entry = results->devices.emplace_back(
                        DevicePools{id, d.name, list_location_pools(driver.api(), device), std::nullopt});
                    if (o.acts()) entry.selected = act_on_pool(driver.api(), device, p, o);
                }
            });
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
