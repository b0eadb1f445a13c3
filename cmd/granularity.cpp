// `cumemctl granularity`: the minimum and recommended allocation granularity of every location x
// handle type x flag set on each device, or why the driver refuses it. No context is created.
#include <algorithm>

#include <fmt/format.h>

#include "command.hpp"
#include "commands.hpp"
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

std::string flags_text(const MemoryRequest& r) {
    const auto names = flag_names(r);
    return names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, "+"));
}

// Why a row has no answer, in one cell: the driver's error name and the cause.
std::string why_text(const GranularityRow& row) {
    if (row.status == GranularityRow::Status::ok) return "";
    const Problem& p = *row.problem;
    const std::string what = p.cause.empty() ? p.message : p.cause;
    return p.driver ? fmt::format("{}: {}", p.driver->name, what) : what;
}

Table rows_table(const std::vector<GranularityRow>& rows, const std::optional<std::uint64_t>& size) {
    Table t;
    t.title = "Allocation granularity";
    t.columns = {"GPU", "location", "handle type", "flags", "minimum", "recommended"};
    if (size) {
        t.columns.push_back("size to min");
        t.columns.push_back("size to rec");
        t.notes.push_back(fmt::format("size {} bytes ({}), rounded up to each granularity", *size, format_size(*size)));
    }
    t.columns.insert(t.columns.end(), {"status", "why"});
    t.wrap_last = true;  // the notes: each reason wraps to the width, its number in the rows
    std::vector<std::string> reasons;
    for (const auto& row : rows) {
        const bool ok = row.status == GranularityRow::Status::ok;
        std::vector<TableCell> cells{std::to_string(row.device),
                                     granularity_location_text(row),
                                     handle_type_name(row.request.handle_type),
                                     flags_text(row.request),
                                     ok ? format_size(row.granularity.minimum) : "-",
                                     ok ? format_size(row.granularity.recommended) : "-"};
        if (size) {
            cells.push_back(ok ? format_size(round_up(*size, row.granularity.minimum)) : "-");
            cells.push_back(ok ? format_size(round_up(*size, row.granularity.recommended)) : "-");
        }
        const Tone tone = ok ? Tone::good : row.status == GranularityRow::Status::refused ? Tone::bad : Tone::plain;
        cells.push_back({granularity_status_name(row.status), tone});
        // Each distinct reason once, below the table, and its number in the row: the same refusal
        // repeats across devices and flags, and rows stay short.
        // The general cause, before the properties that the row's own cells already name.
        std::string why = why_text(row);
        if (const auto colon = why.find(": ", why.find(": ") + 1); colon != std::string::npos) why.resize(colon);
        if (!why.empty()) {
            auto it = std::find(reasons.begin(), reasons.end(), why);
            if (it == reasons.end()) it = reasons.insert(reasons.end(), why);
            cells.push_back(fmt::format("[{}]", it - reasons.begin() + 1));
        } else {
            cells.emplace_back();
        }
        t.rows.push_back(std::move(cells));
    }
    if (!reasons.empty()) t.notes.emplace_back("");
    for (std::size_t i = 0; i < reasons.size(); ++i) t.notes.push_back(fmt::format("[{}] {}", i + 1, reasons[i]));
    return t;
}

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
            report.set_results(granularity_results(count, rows, plan->size, ids));
            if (count == 0) {
                report.tables.push_back(
                    Table{"Allocation granularity", {}, {}, {"no CUDA device is visible on this node"}});
                return;
            }
            report.tables.push_back(rows_table(rows, plan->size));
            if (plan->selection.flag_sets.size() > 1) {
                report.tables.back().notes.push_back(
                    "flags: none and each flag alone; give several of --compression, --rdma, --tile-pool for that "
                    "combination");
            }
            report.tables.back().notes.emplace_back("");
            add_identity_notes(report.tables.back(), ids);
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
