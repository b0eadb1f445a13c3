// `cumemctl trim`: a workload with a release threshold that keeps its memory reserved, then
// cuMemPoolTrimTo(--keep): a check that the memory comes back to the device.
#include <unistd.h>

#include <fmt/format.h>

#include "command.hpp"
#include "gpu/device/devices.hpp"
#include "gpu/device/held_device.hpp"
#include "held_errors.hpp"
#include "gpu/device/primary_context.hpp"
#include "gpu/pool/pool_trim.hpp"
#include "gpu/vmm/resource_snapshot.hpp"
#include "gpu_identity.hpp"
#include "pool_options.hpp"
#include "pool_report.hpp"
#include "trim_results.hpp"
#include "util/duration.hpp"
#include "util/size.hpp"
#include "gpu/device/locality.hpp"

namespace cumemctl::cmd {
using namespace gpu;
namespace {

// The options, parsed and checked before the driver is loaded.
struct TrimPlan {
    DeviceList devices;
    PoolSelection pool;
    WorkloadPattern pattern;
    bool default_workload = true;  // --exercise not given: fitted beside other processes where it must be
    std::uint64_t keep = 0;
};

// The options as typed.
struct TrimOptions {
    std::string devices;
    std::string pool = "default";  // --pool default|current|new
    MemoryOptions memory;          // --location (device only), --handle-type
    PoolOptions new_pool;          // --max-size
    std::string exercise = "64x16MiB";
    bool exercise_given = false;  // --exercise on the command line: a workload that does not fit is a usage error
    std::string keep = "0";

    TrimPlan check() const {
        if (!is_device_memory(parse_location(memory.location).type)) {
            throw Error(
                ExitCode::usage,
                "trim works on device pools: it shows the device's free memory beside the pool's reserved memory",
                "leave out --location or give --location device (or domain:I, a locality domain of the device)");
        }
        return {parse_device_list(devices), pool_selection(pool, memory, new_pool), parse_workload_pattern(exercise),
                !exercise_given, parse_size(keep)};
    }
};

// The share of the free memory that the default workload may take beside other processes.
constexpr std::uint64_t kDefaultWorkloadShare = 2;  // a half: the job beside it may grow

// The default workload on `device`, fitted into half of its free memory where it does not fit (the user
// typed no workload, so one that does not fit is no usage error): fewer allocations, said in a warning;
// none fits: exit 3, naming the processes that hold the memory.
WorkloadPattern fit_default_workload(Report& report, const DriverApi& api, const nvml::Library& nvml,
                                     const DeviceIdentity& id, const WorkloadPattern& pattern, std::uint64_t granule) {
    const std::uint64_t free = current_device_memory(api).free;
    if (pool_footprint(pattern, granule) <= free) return pattern;
    const std::uint64_t budget = free / kDefaultWorkloadShare;
    if (auto fitted = shrink_to_fit(pattern, granule, budget)) {
        report.add_warning(fmt::format("the default workload '{}' does not fit in GPU {}'s free memory ({}): trim "
                                       "ran '{}', which takes at most half of it",
                                       pattern.text, id.ordinal, format_size(free), fitted->text),
                           "give --exercise to choose the workload", id.ordinal);
        return *fitted;
    }
    const HeldDevice held = holders_of(&nvml, id.uuid, {::getpid()});
    Problem p{.exit_code = ExitCode::unavailable,
              .message = fmt::format("trim on GPU {}: not even one allocation of its default workload '{}' fits in "
                                     "half of the device's free memory ({})",
                                     id.ordinal, pattern.text, format_size(free)),
              .remedy = kHeldRemedy,
              .device = id.ordinal};
    if (held.verdict == HeldDevice::Verdict::held) {
        mark_held(p, held.holders);
        p.cause = fmt::format("{}: {}", holds_sentence(held), holders_sentence(held.holders));
    } else {
        p.cause = held.verdict == HeldDevice::Verdict::no_other_process
                      ? "NVML lists no other process on the device"
                      : fmt::format("cumemctl cannot tell who holds the device's memory: {}", held.why);
    }
    throw Error(std::move(p));
}

// The pool that trim works on, on `device` (made where --pool new asks; `owned` keeps it).
PoolInfo trim_pool(const DriverApi& api, int device, const TrimPlan& plan, const CUmemLocation& location,
                   std::optional<OwnedPool>& owned) {
    if (plan.pool.choice == PoolChoice::new_pool) {
        owned.emplace(api, device, plan.pool.request);
        return owned->info();
    }
    check_pool_support(api, device, location, CU_MEM_HANDLE_TYPE_NONE);
    return plan.pool.choice == PoolChoice::default_pool
               ? default_pool(api, device, location, CU_MEM_ALLOCATION_TYPE_PINNED)
               : current_pool(api, device, location, CU_MEM_ALLOCATION_TYPE_PINNED);
}

// One device's trim: its results (added to `results`) and, where the memory did not come back,
// error.
void trim_device(Report& report, TrimResults& results, const DriverApi& api, const nvml::Library& nvml,
                 const DeviceIdentity& id, const TrimPlan& plan) {
    const int device = id.ordinal;
    const PrimaryContext context(api, device);
    const CUmemLocation location = resolve_location(api, plan.pool.request.location, device);
    std::optional<OwnedPool> owned;
    const PoolInfo pool = trim_pool(api, device, plan, location, owned);
    const std::uint64_t granule = pool_granule(api, location);
    const WorkloadPattern workload =
        plan.default_workload ? fit_default_workload(report, api, nvml, id, plan.pattern, granule) : plan.pattern;
    require_room(api, fmt::format("workload '{}'", workload.text), pool_footprint(workload, granule), location,
                 pool.max_size.value_or(0));
    const TrimResult r = run_trim(api, pool.handle, workload, plan.keep, granule);
    results.devices.push_back({id, pool, workload, r});
    if (!r.verdict.returned) {
        report.add_error(Problem{
            .exit_code = ExitCode::failed,
            .message = fmt::format("trim on GPU {}: the memory did not come back: {}", device, r.verdict.reason),
            .remedy = "the driver kept pool memory that cuMemPoolTrimTo should have released; run again, and if "
                      "it stays, report it with the driver version",
            .device = device});
    }
}

Report run_trim_command(const TrimOptions& o, const Globals& globals) {
    const NvmlLoad nvml_load = load_nvml_for_identities(globals);
    return run_command("trim", globals, o, [&](Report& report, Driver& driver, int count, const TrimPlan& plan) {
        const DriverApi& api = driver.api();
        const auto selected = plan.devices.select(api, count, &nvml_load.get());
        // Filled device by device: a device that fails keeps the ones before it in the report.
        const auto results = std::make_shared<TrimResults>();
        report.results = results;
        const std::vector<DeviceIdentity> ids = identities_of(report, globals, api, nvml_load, selected);
        judging_holds(report, api, nvml_load.get(), selected, [&] {
            for (int device : selected) {
                trim_device(report, *results, api, nvml_load.get(), identity_in(ids, device), plan);
            }
        });
    });
}

}  // namespace

void register_trim(CLI::App& root, const Globals& globals, Runner& runner) {
    auto opts = std::make_shared<TrimOptions>();
    CLI::App* app =
        root.add_subcommand("trim", "check that cuMemPoolTrimTo gives a pool's reserved memory back to the device");
    add_device_option(*app, opts->devices);
    app->add_option("--pool", opts->pool, "the pool: default, current or new")->capture_default_str();
    add_new_pool_options(*app, opts->memory, opts->new_pool);
    // trim judges a device pool (its reserved memory beside the device's free memory): it takes the
    // device or a locality domain of it, so its help offers no host location.
    app->get_option("--location")
        ->description("device, or domain:I (a locality domain of the device): device pools only");
    app->add_option("--exercise", opts->exercise,
                    "the workload that fills the pool first (the default takes at most half of the free memory "
                    "where it does not fit)")
        ->capture_default_str()
        ->each([opts](const std::string&) { opts->exercise_given = true; });
    app->add_option("--keep", opts->keep, "cuMemPoolTrimTo's minimum bytes to keep")->capture_default_str();
    app->callback(
        [opts, &globals, &runner] { runner = [opts, &globals] { return run_trim_command(*opts, globals); }; });
}

}  // namespace cumemctl::cmd
