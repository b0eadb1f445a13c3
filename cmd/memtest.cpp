// `cumemctl memtest`: every free byte of each chosen GPU's memory (less a margin) tested with patterns
// at memory speed, with what NVML saw before and after, a verdict and the remedy. Refuses to run beside
// another process on the device unless --force; --record keeps the result for doctor.
#include <unistd.h>

#include <future>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "command.hpp"
#include "gpu_identity.hpp"
#include "held_errors.hpp"
#include "gpu/device/devices.hpp"
#include "gpu/device/held_device.hpp"
#include "gpu/memtest/memtest.hpp"
#include "gpu/memtest/memtest_record.hpp"
#include "gpu/verify/verify.hpp"
#include "memtest_report.hpp"
#include "memtest_results.hpp"
#include "util/host.hpp"
#include "util/size.hpp"

namespace cumemctl::cmd {
using namespace gpu;
using namespace gpu::memtest;
namespace {

// The margin left to the context and the driver when none is given.
constexpr const char* kDefaultLeave = "256MiB";

// The options, checked before the driver is loaded.
struct MemtestPlan {
    DeviceList devices;
    SizePlan sizes;
    std::vector<Pattern> patterns;
    unsigned passes = 1;
    std::optional<double> time_budget;
    std::optional<std::uint64_t> seed;
    unsigned max_mismatches = 32;
    bool force = false;
    bool record = false;
};

// The options as typed.
struct MemtestOptions {
    std::string devices;
    std::string leave = kDefaultLeave;
    std::string size;
    std::optional<double> fraction;
    std::string chunk;
    std::string patterns = "all";
    unsigned passes = 1;
    std::optional<double> time;
    std::optional<std::uint64_t> seed;
    unsigned max_mismatches = 32;
    bool force = false;
    bool record = false;

    MemtestPlan check() const {
        MemtestPlan p;
        p.devices = parse_device_list(devices);
        p.sizes.leave = parse_size(leave);
        if (!size.empty() && fraction) {
            throw Error(ExitCode::usage, "--size and --fraction both say how much to test",
                        "give one of them (or neither, to test all free memory less --leave)");
        }
        if (!size.empty()) {
            p.sizes.size = parse_size(size);
            if (*p.sizes.size == 0)
                throw Error(ExitCode::usage, "--size 0 tests nothing",
                            "give a size of one recommended granule or more ('cumemctl granularity' says it)");
        }
        if (fraction && (!(*fraction > 0) || *fraction > 1)) {
            throw Error(ExitCode::usage, fmt::format("--fraction {} is not in (0, 1]", *fraction),
                        "give a fraction of the free memory less --leave, such as 0.5");
        }
        p.sizes.fraction = fraction;
        if (!chunk.empty()) {
            p.sizes.chunk = parse_size(chunk);
            if (p.sizes.chunk == 0)
                throw Error(ExitCode::usage, "--chunk 0 is no chunk size", "give --chunk 1GiB, or leave it out");
        }
        p.patterns = parse_pattern_list(patterns);
        if (passes == 0) throw Error(ExitCode::usage, "--passes 0 runs nothing", "give --passes 1 or more");
        p.passes = passes;
        if (time && !(*time > 0)) {
            throw Error(ExitCode::usage, fmt::format("--time {} is no time budget", *time), "give seconds above 0");
        }
        p.time_budget = time;
        p.seed = seed;
        p.max_mismatches = max_mismatches;
        p.force = force;
        p.record = record;
        return p;
    }
};

// The verdict as a report entry: an error (exit 1) for fail, a warning for warn.
void report_verdict(Report& report, const DeviceMemtest& d) {
    const std::string reasons = fmt::format("{}", fmt::join(d.verdict.reasons, "; "));
    if (d.verdict.status == CheckStatus::fail) {
        report.add_error(Problem{.exit_code = ExitCode::failed,
                                 .message = fmt::format("memtest on GPU {}: fail: {}", d.ordinal, reasons),
                                 .remedy = d.verdict.remedy,
                                 .device = d.ordinal});
    } else if (d.verdict.status == CheckStatus::warn) {
        report.add_warning(fmt::format("memtest on GPU {}: warn: {}", d.ordinal, reasons), d.verdict.remedy, d.ordinal);
    }
    if (d.shortfall) {
        report.add_warning(fmt::format("memtest on GPU {}: tested {:.2f}% of the free memory: {}", d.ordinal,
                                       100 * d.coverage(), d.shortfall->message),
                           d.shortfall->remedy, d.ordinal);
    }
    if (!d.run.yielded.empty()) {
        report.add_warning(
            fmt::format("memtest on GPU {} gave its memory back early: {}; {} pattern pass{} not run", d.ordinal,
                        d.run.yielded, d.run.not_run.size(), d.run.not_run.size() == 1 ? "" : "es"),
            "run memtest again when the GPU is idle", d.ordinal);
    }
    if (d.run.budget_ran_out) {
        report.add_warning(
            fmt::format("memtest on GPU {}: the time budget ran out: {} pattern pass{} not run ({})", d.ordinal,
                        d.run.not_run.size(), d.run.not_run.size() == 1 ? "" : "es", fmt::join(d.run.not_run, ", ")),
            "give a longer --time, or fewer --patterns or --passes, to run them all", d.ordinal);
    }
    if (d.size_capped) {
        report.add_warning(fmt::format("memtest on GPU {}: --size is more than the free memory less --leave; tested {}",
                                       d.ordinal, format_size(d.tested)),
                           "give a smaller --size or --leave", d.ordinal);
    }
    if (!d.other_processes.empty()) {
        report.add_warning(fmt::format("memtest on GPU {} ran beside {} (--force): {}", d.ordinal,
                                       d.other_processes.size() == 1 ? "another process" : "other processes",
                                       holders_sentence(d.other_processes)),
                           "an allocation failure or a slow pattern may be theirs: run it again on an idle GPU",
                           d.ordinal);
        report.warnings.back().held_by = d.other_processes;  // named as the frame names them (shared_gpu.hpp)
    }
    for (const Problem& p : d.release_failures) report.add_error(p);
}

// The state file's entry for a device's run.
MemtestRecord record_of(const DeviceMemtest& d, std::uint64_t seed) {
    MemtestRecord r;
    r.uuid = d.uuid;
    r.host = host_name();
    const auto now = std::chrono::system_clock::now();
    r.finished = utc_timestamp(now);
    r.finished_unix = unix_seconds(now);
    r.status = d.run.interrupted_by != 0 ? "stopped" : std::string(status_name(d.verdict.status));
    r.reasons = d.verdict.reasons;
    r.bytes_tested = d.tested;
    r.free_at_start = d.free_at_start;
    r.mismatches = d.run.mismatches;
    for (const auto& p : d.run.done) r.patterns_run.push_back(fmt::format("{} pass {}", p.pattern, p.pass));
    r.seed = seed;
    return r;
}

// The results before any device ran: how memtest was asked to run, and NVML's library.
MemtestResults memtest_settings(const MemtestPlan& plan, std::uint64_t seed, const nvml::LibraryInfo& nvml) {
    MemtestResults r;
    r.seed = seed;
    r.patterns = plan.patterns;
    r.passes = plan.passes;
    r.time_budget = plan.time_budget;
    r.leave = plan.sizes.leave;
    r.forced = plan.force;
    if (plan.record) r.record = memtest_state_path();
    r.max_mismatches = plan.max_mismatches;
    r.nvml = nvml;
    return r;
}

// What the frame's progress line says of a device's run (progress_line.hpp): a bar, the pattern, the
// pass, GB done, GB/s and the time left.
std::string progress_text(int device, const memtest::Progress& p) {
    const double done = static_cast<double>(p.bytes_done), total = static_cast<double>(p.bytes_total);
    const double rate = p.seconds > 0 ? done / p.seconds : 0;
    const double left = rate > 0 ? (total - done) / rate : 0;
    const int width = 24;
    const int filled = total > 0 ? static_cast<int>(width * done / total) : 0;
    return fmt::format("GPU {} [{}{}] {} pass {}/{}  {:.0f}/{:.0f} GB  {:.0f} GB/s  {:.1f} s left", device,
                       std::string(static_cast<std::size_t>(filled), '#'),
                       std::string(static_cast<std::size_t>(width - filled), '.'), p.pattern, p.pass, p.passes,
                       done / 1e9, total / 1e9, rate / 1e9, left);
}

// Runs every device on a thread of its own; a device whose run throws is an error of the report.
std::vector<DeviceMemtest> run_devices(const DriverApi& api, const nvml::Library& nvml,
                                       const std::vector<int>& selected, const MemtestPlan& plan, const RunPlan& run,
                                       bool shows_progress, Report& report) {
    std::vector<std::future<DeviceMemtest>> futures;
    for (const int device : selected) {
        futures.push_back(std::async(std::launch::async, [&, device] {
            RunPlan mine = run;
            if (shows_progress)
                mine.progress = [device](const memtest::Progress& p) { progress_say(progress_text(device, p)); };
            return run_device_memtest(api, &nvml, device, plan.sizes, mine, plan.force);
        }));
    }
    std::vector<DeviceMemtest> done;
    const std::size_t first_error = report.errors.size();
    for (std::size_t i = 0; i < futures.size(); ++i) {
        try {
            done.push_back(futures[i].get());
        } catch (const Error& e) {
            Problem p = e.problem();
            if (!p.device) p.device = selected[i];
            report.add_error(std::move(p));
        }
    }
    judge_held_errors(report, api, nvml, selected, first_error);  // --force beside a job: exit 3, not 1
    return done;
}

Report run_memtest(const MemtestOptions& o, const Globals& globals) {
    const NvmlLoad nvml_load = load_nvml_for_identities(globals);
    return run_command("memtest", globals, o, [&](Report& report, Driver& driver, int count, const MemtestPlan& plan) {
        const nvml::Library& nvml = nvml_load.get();
        const auto selected = plan.devices.select(driver.api(), count, &nvml);
        warn_unloaded_libnvml(report, globals, nvml.info());
        RunPlan run;
        run.patterns = plan.patterns;
        run.passes = plan.passes;
        run.time_budget = plan.time_budget;
        run.seed = plan.seed.value_or(random_pattern_seed());
        run.max_records = plan.max_mismatches;
        if (plan.record) check_memtest_state(memtest_state_path());
        MemtestResults results = memtest_settings(plan, run.seed, nvml.info());
        report.set_results(results);  // what stays when a device's run throws past its error
        const std::vector<DeviceMemtest> done =
            run_devices(driver.api(), nvml, selected, plan, run, shows_progress(globals), report);
        int stopped_by = 0;
        std::vector<MemtestRecord> records;
        for (const DeviceMemtest& d : done) {
            const gpu::DeviceIdentity id = gpu::device_identity(driver.api(), d.ordinal, &nvml);
            results.devices.push_back({d, id});
            report_verdict(report, d);
            if (d.run.interrupted_by != 0) stopped_by = d.run.interrupted_by;
            if (!d.uuid.empty()) records.push_back(record_of(d, run.seed));
        }
        report.set_results(std::move(results));
        if (plan.record && !records.empty()) save_memtest_records(memtest_state_path(), records);
        if (stopped_by != 0) {
            const Interrupted stop(stopped_by);
            report.add_error(interrupted_problem(stop));
            report.exit_code = stop.exit_code();
        }
    });
}

}  // namespace

void register_memtest(CLI::App& root, const Globals& globals, Runner& runner) {
    auto o = std::make_shared<MemtestOptions>();
    CLI::App* app = root.add_subcommand(
        "memtest", "test every free byte of each GPU's memory with patterns at memory speed, with NVML's view");
    add_device_option(*app, o->devices);
    app->add_option("--leave", o->leave, "memory left free for the context and the driver")->capture_default_str();
    app->add_option("--size", o->size, "test this much instead of all free memory less --leave");
    app->add_option("--fraction", o->fraction, "test this fraction (0 to 1) of the free memory less --leave");
    app->add_option("--chunk", o->chunk,
                    "the cuMemCreate chunk size, a multiple of the recommended granularity (default 1GiB)");
    app->add_option("--patterns", o->patterns, "address, inversions, walking, random (a list), or all")
        ->capture_default_str();
    app->add_option("--passes", o->passes, "how many times to run the patterns")->capture_default_str();
    app->add_option("--time", o->time, "seconds: no pattern starts after this, the one under way finishes");
    app->add_option("--seed", o->seed, "the random pattern's seed (printed by every run), to repeat a run");
    app->add_option("--max-mismatches", o->max_mismatches,
                    "mismatching words listed per pattern pass (all are counted)")
        ->capture_default_str();
    app->add_flag("--force", o->force, "run even when NVML lists another process on the device (said in the report)");
    app->add_flag("--record", o->record, "keep the result in the state file that doctor reads");
    app->callback([o, &globals, &runner] { runner = [o, &globals] { return run_memtest(*o, globals); }; });
}

}  // namespace cumemctl::cmd
