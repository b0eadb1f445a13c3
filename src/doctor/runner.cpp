#include "doctor/runner.hpp"

#include <algorithm>
#include <future>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "base/setting.hpp"
#include "base/interrupt.hpp"
#include "doctor/budget.hpp"
#include "doctor/kernel_gpus.hpp"
#include "doctor/busy.hpp"
#include "doctor/registry.hpp"
#include "gpu/device/devices.hpp"
#include "gpu/diagnosis/diagnosis.hpp"
#include "util/phase_timing.hpp"
#include "util/stopwatch.hpp"

namespace cumemctl::doctor {
using namespace gpu;
namespace {

// A remedy for a problem that came without one: diagnosis's table for a failed driver call.
std::string remedy_for(const Problem& problem) {
    if (problem.remedy_changes_request) {
        // doctor chose the properties itself: leaving out options is no way out for its reader.
        const std::string device = problem.device ? std::to_string(*problem.device) : "";
        const auto on_device = [&](Command c) {
            return device.empty() ? command_line(c) : command_line(c, {{Setting::device, device}});
        };
        return fmt::format(
            "the driver refused memory that this GPU's attributes say it supports: compare 'cumemctl {}' with "
            "'cumemctl {}', update the driver, and report it with the output of 'cumemctl {}'",
            on_device(Command::granularity), on_device(Command::devices),
            command_line(Command::doctor, {{Setting::json}}));
    }
    if (!problem.remedy.empty()) return problem.remedy;
    if (problem.driver) return remedy_by_result(*problem.driver);
    return "see the driver's answer above; nvidia-smi and the kernel log (dmesg | grep -i nvrm) tell more";
}

// Runs one check, timed; exceptions become results.
CheckResult run_one(const CheckSpec& spec, DoctorContext& ctx, DeviceState* device, const RunHooks& hooks) {
    Stopwatch watch;
    CheckResult r;
    r.check = std::string(spec.id);
    if (device != nullptr) r.device = device->ordinal();
    if (hooks.doing) hooks.doing(r.device ? fmt::format("GPU {}: {}", *r.device, spec.id) : std::string(spec.id));
    if (ctx.progress != nullptr) ctx.progress->begin(r.check, r.device);
    try {
        r.outcome = spec.run(ctx, device);
    } catch (const CheckSkipped& e) {
        r.outcome = CheckOutcome::skip(e.what());
    } catch (const Error& e) {
        r.outcome = outcome_from_error(e.problem());
    } catch (const std::exception& e) {
        r.outcome = outcome_from_error(internal_error(e.what()));
    }
    // Out of memory or held in exclusive-process mode: busy beside other processes, or broken.
    if (device != nullptr && may_be_held(spec.id, r.outcome))
        r.outcome = judge_held_check(ctx, *device, std::move(r.outcome));
    r.seconds = watch.seconds();
    if (ctx.progress != nullptr) ctx.progress->finish(r);
    if (phase_timing_enabled()) {
        mark_phase(device != nullptr ? fmt::format("doctor: {} (device {})", spec.id, device->ordinal())
                                     : fmt::format("doctor: {}", spec.id));
    }
    return r;
}

// The catalogue entries of one scope that the options select.
std::vector<const CheckSpec*> selected(const DoctorOptions& options, CheckScope scope) {
    std::vector<const CheckSpec*> out;
    for (const auto& spec : check_catalogue()) {
        if (spec.scope != scope || (options.quick && !spec.quick)) continue;
        if (!options.checks.empty() &&
            std::find(options.checks.begin(), options.checks.end(), spec.id) == options.checks.end()) {
            continue;
        }
        out.push_back(&spec);
    }
    return out;
}

// Runs every device's checks, one thread per device (none for a single device), each after starting
// the device's importer ahead.
void run_device_checks(DoctorContext& ctx, const std::vector<const CheckSpec*>& specs, DoctorRun& run,
                       const RunHooks& hooks) {
    const std::size_t n = ctx.devices.size();
    std::vector<std::vector<CheckResult>> per_device(n);
    // A stop request (SIGINT, SIGTERM) ends a device's checks between checks, or inside one at a step:
    // the thread stops there, and the caller throws Interrupted once every thread has ended.
    std::vector<std::string_view> ids;
    for (const CheckSpec* spec : specs) ids.push_back(spec->id);
    // The last check the importer serves: after it, the importer is let go, so that its context is
    // released while the link checks copy, not beside this process's own release at the end.
    const auto last_served =
        std::find_if(specs.rbegin(), specs.rend(), [](const CheckSpec* spec) { return importer_serves(spec->id); });
    const bool copies = std::any_of(specs.begin(), specs.end(), [](const CheckSpec* spec) {
        return std::string_view(spec->id) == kCheckHostBandwidth || std::string_view(spec->id) == kCheckMemoryBandwidth;
    });
    auto work = [&](std::size_t i) {
        try {
            // The device's importer first: its start-up overlaps the checks before its own; so do the
            // copy checks' questions of NVML.
            start_importer(ctx, *ctx.devices[i], ids);
            if (copies) ctx.devices[i]->ask_paths_ahead(ctx.nvml, ctx.options.sysroot);
            for (const CheckSpec* spec : specs) {
                check_interrupted();
                per_device[i].push_back(run_one(*spec, ctx, ctx.devices[i], hooks));
                if (last_served != specs.rend() && spec == *last_served) ctx.devices[i]->let_importer_go();
            }
        } catch (const Interrupted&) {
        }
        ctx.devices[i]->finish();
    };
    if (n == 1) {
        work(0);
    } else {
        std::vector<std::thread> threads;
        threads.reserve(n);
        for (std::size_t i = 0; i < n; ++i) threads.emplace_back(work, i);
        for (auto& t : threads) t.join();
    }
    check_interrupted();
    for (auto& results : per_device) {
        for (auto& r : results) run.results.push_back(std::move(r));
    }
}

// Gives each device the importer started early for its UUID. Those left (a GPU the driver does not
// show) get their sockets closed, so that they end once started; they are reaped when `early` goes.
void hand_over(std::vector<EarlyImporter>& early, const std::vector<std::unique_ptr<DeviceState>>& states) {
    if (early.empty()) return;
    for (const auto& state : states) {
        const DeviceInfo* info = state->peek_info();
        if (info == nullptr || info->uuid.empty() || state->importer()) continue;
        for (auto& e : early) {
            if (e.child.socket.valid() && e.uuid == info->uuid) {
                state->importer() = std::move(e.child);
                break;
            }
        }
    }
    for (auto& e : early) e.child.socket.reset();
}

// Whether the run measures its devices: a device or node check it selects makes a context (not a quick one).
bool measures(const DoctorOptions& options) {
    for (const CheckScope scope : {CheckScope::device, CheckScope::node}) {
        for (const CheckSpec* spec : selected(options, scope)) {
            if (!spec->quick) return true;
        }
    }
    return false;
}

}  // namespace

CheckOutcome outcome_from_error(const Problem& problem) {
    CheckOutcome o = CheckOutcome::fail(
        problem.cause.empty() ? problem.message : problem.message + ": " + problem.cause, remedy_for(problem));
    o.driver = problem.driver;
    return o;
}

DoctorRun run_doctor(Driver& driver, const DoctorOptions& options, const NvmlLoad& nvml, Progress* progress,
                     const RunHooks& hooks) {
    Stopwatch total;
    DoctorRun run;
    run.quick = options.quick;
    DoctorContext ctx;
    ctx.driver = &driver;
    ctx.options = options;
    ctx.progress = progress;
    const auto device_specs = selected(options, CheckScope::device);
    std::vector<std::string_view> device_ids;
    for (const CheckSpec* spec : device_specs) device_ids.push_back(spec->id);
    // The importers first, for the GPUs the kernel lists: their start-up overlaps this process's. Then
    // the driver's start-up (the setup checks: cuInit) on a thread of its own while this one waits for
    // NVML's: the two overlap. Where the kernel lists no GPU with its UUID (no /proc/driver/nvidia, or a
    // container's empty one), the importers start for NVML's GPUs once it has loaded. They stay on this
    // thread: a second process ends with the thread that started it. The driver's version for the
    // report (its metrics' driver_version), NVML's else the kernel module's, goes to the progress as
    // soon as NVML has loaded, so that a run past its budget keeps it.
    const bool early_start = early_importers_apply(ctx, device_ids);
    std::vector<std::string> kernel_uuids;
    if (early_start) {
        for (const KernelGpu& gpu : kernel_gpus(ctx, kMostEarlyImporters + 1).value_or(std::vector<KernelGpu>{})) {
            if (!gpu.uuid.empty()) kernel_uuids.push_back(gpu.uuid);
        }
    }
    std::vector<EarlyImporter> early;
    if (!kernel_uuids.empty()) {
        early = start_importers_early(ctx, kernel_uuids);
        mark_phase(fmt::format("doctor: importers started early: {}", early.size()));
    }
    if (progress != nullptr) progress->set_driver_version(driver_version(ctx, nullptr));  // NVML's, once loaded
    auto setup = std::async(std::launch::async, [&ctx, &run, &options, &hooks] {
        for (const CheckSpec* spec : selected(options, CheckScope::setup)) {
            check_interrupted();
            run.results.push_back(run_one(*spec, ctx, nullptr, hooks));
        }
    });
    const nvml::Library* const loaded_nvml = nvml ? nvml() : nullptr;
    run.driver_version = driver_version(ctx, loaded_nvml);
    if (progress != nullptr) progress->set_driver_version(run.driver_version);
    mark_phase("doctor: NVML loaded");
    if (early_start && kernel_uuids.empty() && loaded_nvml != nullptr && loaded_nvml->loaded()) {
        check_interrupted();  // a stop meanwhile: no importer to start and end again
        early = start_importers_early(ctx, loaded_nvml->uuids());
        mark_phase(fmt::format("doctor: importers started early from NVML's list: {}", early.size()));
    }
    setup.get();
    ctx.nvml = loaded_nvml;
    ctx.ensure_initialised();
    run.device_count = ctx.device_count;
    std::vector<std::unique_ptr<DeviceState>> states;
    if (ctx.driver_ready()) {
        run.devices = select_devices(options.devices, ctx.device_count, &driver.api(), ctx.nvml);
        for (int ordinal : run.devices) {
            states.push_back(std::make_unique<DeviceState>(driver.api(), ordinal));
            ctx.devices.push_back(states.back().get());
        }
    }
    if (progress != nullptr) progress->set_devices(run.devices, run.device_count);
    hand_over(early, states);
    // The names of each GPU for the results and the metrics (so that they join with dcgm-exporter's),
    // before the device checks, so that a run past its budget still has them (Progress): no context
    // needed, the attributes that the checks read anyway, NVML's index and minor from its list read early.
    for (const auto& state : states) {
        const DeviceInfo* info = state->peek_info();
        const int ordinal = run.devices[run.identities.size()];
        if (info == nullptr) {
            run.identities.push_back(gpu::device_identity(driver.api(), ordinal, ctx.nvml));
            continue;
        }
        gpu::DeviceIdentity id = gpu::identity_of(*info);
        if (ctx.nvml != nullptr && !info->uuid.empty()) id.nvml_index = ctx.nvml->index_of(info->uuid);
        if (ctx.nvml != nullptr && !info->uuid.empty()) id.minor = ctx.nvml->minor_of(info->uuid);
        run.identities.push_back(std::move(id));
    }
    if (progress != nullptr) progress->set_identities(run.identities);
    if (hooks.measuring && !run.devices.empty() && measures(options)) hooks.measuring(run.devices);
    if (!ctx.devices.empty() && !device_specs.empty()) run_device_checks(ctx, device_specs, run, hooks);
    mark_phase("doctor: every device's checks and their end");
    for (const CheckSpec* spec : selected(options, CheckScope::node)) {
        check_interrupted();
        run.results.push_back(run_one(*spec, ctx, nullptr, hooks));
    }
    run.seconds = total.seconds();
    return run;
}

void plan_progress(Progress& progress, const DoctorOptions& options) {
    auto ids = [&](CheckScope scope) {
        std::vector<std::string> out;
        for (const CheckSpec* spec : selected(options, scope)) out.emplace_back(spec->id);
        return out;
    };
    progress.plan(ids(CheckScope::setup), ids(CheckScope::device), ids(CheckScope::node));
}

gpu::DeviceIdentity identity_of(const DoctorRun& run, int ordinal) {
    for (const auto& id : run.identities) {
        if (id.ordinal == ordinal) return id;
    }
    return gpu::DeviceIdentity{ordinal, {}, {}, {}, {}, {}};
}

std::array<int, kStatusCount> count_statuses(const std::vector<CheckResult>& results) {
    std::array<int, kStatusCount> counts{};
    for (const auto& r : results) ++counts[static_cast<std::size_t>(r.outcome.status)];
    return counts;
}

CheckStatus run_status(const std::array<int, kStatusCount>& counts) {
    for (const CheckStatus s : statuses_worst_first()) {
        if (status_severity(s) <= status_severity(CheckStatus::pass)) break;
        if (counts[static_cast<std::size_t>(s)] > 0) return s;
    }
    return CheckStatus::pass;
}

}  // namespace cumemctl::doctor
