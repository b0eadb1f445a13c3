// `cumemctl trim`: a workload with a release threshold that keeps its memory reserved, then
// cuMemPoolTrimTo(--keep): a check that the memory comes back to the device.
#include <fmt/format.h>

#include "command.hpp"
#include "commands.hpp"
#include "gpu/device/devices.hpp"
#include "gpu/device/primary_context.hpp"
#include "gpu/pool/pool_trim.hpp"
#include "gpu/vmm/resource_snapshot.hpp"
#include "gpu_identity.hpp"
#include "pool_options.hpp"
#include "pool_report.hpp"
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
    std::uint64_t keep = 0;
};

// The options as typed.
struct TrimOptions {
    std::string devices;
    std::string pool = "default";  // --pool default|current|new
    MemoryOptions memory;          // --location (device only), --handle-type
    PoolOptions new_pool;          // --max-size
    std::string exercise = "64x16MiB";
    std::string keep = "0";

    TrimPlan check() const {
        if (!is_device_memory(parse_location(memory.location).type)) {
            throw Error(
                ExitCode::usage,
                "trim works on device pools: it shows the device's free memory beside the pool's reserved memory",
                "leave out --location or give --location device (or domain:I, a locality domain of the device)");
        }
        return {parse_device_list(devices), pool_selection(pool, memory, new_pool), parse_workload_pattern(exercise),
                parse_size(keep)};
    }
};

nlohmann::json trim_json(const PoolInfo& pool, const WorkloadPattern& pattern, const TrimResult& r) {
    nlohmann::json j = to_json(r.figures);
    j["pool"] = pool_info_json(pool);
    j["exercise"] = workload_json(pattern, r.workload);
    j["trim_seconds"] = r.trim_seconds;
    j["returned"] = r.verdict.returned;
    j["reason"] = r.verdict.reason;
    return j;
}

Table trim_table(int device, const TrimResult& r) {
    const TrimFigures& f = r.figures;
    Table t{fmt::format("Trim on GPU {} (keep {})", device, format_size(f.keep)),
            {"", "before trim", "after trim"},
            {},
            {}};
    t.rows = {{"pool reserved", format_size(f.reserved_before), format_size(f.reserved_after)},
              {"device free (device-wide)", format_size(f.free_before_trim), format_size(f.free_after_trim)},
              {"device free at start (device-wide)", format_size(f.free_at_start), ""},
              {"cuMemPoolTrimTo", "", format_duration(r.trim_seconds)},
              {"memory returned", "", r.verdict.returned ? "pass" : "fail"}};
    t.notes = {r.verdict.reason, kPerProcessNote, fmt::format("device free memory is {}", kDeviceFreeScope)};
    t.wrap_last = true;  // the notes wrap to the width
    return t;
}

// Runs the core's trim work with its usage errors in trim's words: --keep, --exercise, --max-size.
template <class Work>
TrimResult trim_in_option_words(Work&& work) {
    try {
        return with_pool_option_words(work);
    } catch (const KeepAboveReservedError& e) {
        throw Error(ExitCode::usage,
                    fmt::format("--keep {} ({} bytes) is more than the pool has reserved: {} ({} bytes)",
                                format_size(e.keep), e.keep, format_size(e.reserved), e.reserved),
                    fmt::format("give --keep at most {}, or a larger --exercise workload", format_size(e.reserved)));
    }
}

Report run_trim_command(const TrimOptions& o, const Globals& globals) {
    const NvmlLoad nvml_load = load_nvml_for_identities(globals);
    return run_command("trim", globals, o, [&](Report& report, Driver& driver, int count, const TrimPlan& plan) {
        const DriverApi& api = driver.api();
        const PoolChoice choice = plan.pool.choice;
        const PoolRequest& request = plan.pool.request;
        const WorkloadPattern& pattern = plan.pattern;
        const std::uint64_t keep = plan.keep;
        const auto selected = plan.devices.select(driver.api(), count, &nvml_load.get());
        report.results = {{"statistics_scope", "process"}, {"devices", nlohmann::json::array()}};
        const std::vector<DeviceIdentity> ids = identities_of(report, globals, api, nvml_load, selected);
        for (int device : selected) {
            const DeviceIdentity id = identity_in(ids, device);
            const PrimaryContext context(api, device);
            const CUmemLocation location = resolve_location(api, request.location, device);
            std::optional<OwnedPool> owned;
            PoolInfo pool;
            if (choice == PoolChoice::new_pool) {
                owned.emplace(api, device, request);
                pool = owned->info();
            } else {
                check_pool_support(api, device, location, CU_MEM_HANDLE_TYPE_NONE);
                pool = choice == PoolChoice::default_pool
                           ? default_pool(api, device, location, CU_MEM_ALLOCATION_TYPE_PINNED)
                           : current_pool(api, device, location, CU_MEM_ALLOCATION_TYPE_PINNED);
            }
            const std::uint64_t granule = pool_granule(api, location);
            const TrimResult r = trim_in_option_words([&] {
                require_room(api, fmt::format("workload '{}'", pattern.text), pool_footprint(pattern, granule),
                             location, pool.max_size.value_or(0));
                return run_trim(api, pool.handle, pattern, keep, granule);
            });
            nlohmann::json j = trim_json(pool, pattern, r);
            j["ordinal"] = device;
            add_identity(j, id);
            report.results["devices"].push_back(std::move(j));
            report.tables.push_back(trim_table(device, r));
            report.tables.back().notes.push_back(identity_note(id));
            if (!r.verdict.returned) {
                Problem p{
                    .exit_code = ExitCode::failed,
                    .message =
                        fmt::format("trim on GPU {}: the memory did not come back: {}", device, r.verdict.reason),
                    .remedy =
                        "the driver kept pool memory that cuMemPoolTrimTo should have released; run again, and if "
                        "it stays, report it with the driver version",
                    .device = device};
                report.add_error(std::move(p));
            }
        }
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
    app->add_option("--exercise", opts->exercise, "the workload that fills the pool first")->capture_default_str();
    app->add_option("--keep", opts->keep, "cuMemPoolTrimTo's minimum bytes to keep")->capture_default_str();
    app->callback(
        [opts, &globals, &runner] { runner = [opts, &globals] { return run_trim_command(*opts, globals); }; });
}

}  // namespace cumemctl::cmd
