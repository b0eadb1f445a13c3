// `cumemctl granularity`: the minimum and recommended allocation granularity of every location x
// handle type x flag set on each device, or why the driver refuses it. No context is created.
#include <algorithm>

#include <fmt/format.h>

#include "command.hpp"
#include "gpu/device/devices.hpp"
#include "gpu/device/granularity.hpp"
#include "gpu/diagnosis/diagnosis.hpp"
#include "granularity_results.hpp"
#include "gpu_identity.hpp"
#include "memory_options.hpp"
#include "util/size.hpp"

namespace cumemctl::cmd {
using namespace gpu;
namespace {

// The options parsed, before the driver is loaded, so that a usage error is one whatever the driver.
struct GranularityPlan {
    DeviceList devices;
    GranularitySelection selection;
    std::optional<std::uint64_t> size;
};

// The options as typed.
struct GranularityOptions {
    std::string devices;
    MemoryFilters filters;
    std::string size;         // --size
    bool size_given = false;  // --size was given ('' is given, and refused as a size)

    GranularityPlan check() const {
        GranularityPlan plan;
        plan.devices = parse_device_list(devices);
        plan.selection = filters.to_selection();
        if (size_given) {
            plan.size = parse_size(size);
            if (*plan.size == 0) {
                throw Error(ExitCode::usage, "invalid size '0': an allocation has at least one granule",
                            "give a size above 0, e.g. 2MiB");
            }
        }
        return plan;
    }
};

// The results: the rows, with --size rounded up to the granularities of each that has them (a usage
// error where that overflows).
GranularityResults granularity_results(int count, const std::vector<GranularityRow>& rows,
                                       const std::optional<std::uint64_t>& size, std::vector<DeviceIdentity> ids) {
    GranularityResults results;
    results.device_count = count;
    for (const auto& row : rows) {
        GranularityAnswer answer{row, std::nullopt};
        if (size && row.status == GranularityRow::Status::ok) {
            answer.rounded =
                RoundedSize{round_up(*size, row.granularity.minimum), round_up(*size, row.granularity.recommended)};
        }
        results.rows.push_back(std::move(answer));
    }
    results.size = size;
    results.ids = std::move(ids);
    return results;
}

Report run_granularity(const GranularityOptions& opts, const Globals& globals) {
    const NvmlLoad nvml_load = load_nvml_for_identities(globals);
    return run_command(
        "granularity", globals, opts, [&](Report& report, Driver& driver, int count, const GranularityPlan& p) {
            const GranularityPlan* plan = &p;
            const auto devices = plan->devices.select(driver.api(), count, &nvml_load.get());
            const auto rows = granularity_table(driver.api(), devices, plan->selection,
                                                [&](Problem& problem, int device, const CUmemAllocationProp& prop) {
                                                    DiagnosisContext context;
                                                    context.device = device;
                                                    context.prop = prop;
                                                    diagnose_problem(driver.api(), problem, context);
                                                });
            const std::vector<DeviceIdentity> ids = identities_of(report, globals, driver.api(), nvml_load, devices);
            GranularityResults results = granularity_results(count, rows, plan->size, ids);
            results.each_flag_alone = plan->selection.flag_sets.size() > 1;
            report.set_results(std::move(results));
            if (count == 0) return;
            const bool any_ok = std::any_of(rows.begin(), rows.end(), [](const GranularityRow& r) {
                return r.status == GranularityRow::Status::ok;
            });
            if (!any_ok) {
                throw Error(ExitCode::unavailable, "the driver accepts none of the selected combinations",
                            "the rows say why; widen --location, --handle-type or the flags");
            }
        });
}

}  // namespace

void register_granularity(CLI::App& root, const Globals& globals, Runner& runner) {
    auto opts = std::make_shared<GranularityOptions>();
    CLI::App* app = root.add_subcommand("granularity", "minimum and recommended allocation granularity, or why not");
    add_device_option(*app, opts->devices);
    add_memory_filters(*app, opts->filters);
    CLI::Option* size =
        app->add_option("--size", opts->size, "also round SIZE up to each granularity (4096, 2MiB, 1.5GiB, 1G)");
    app->callback([opts, size, &globals, &runner] {
        opts->size_given = size->count() > 0;
        runner = [opts, &globals] { return run_granularity(*opts, globals); };
    });
}

}  // namespace cumemctl::cmd
