// `cumemctl doctor`: whether this node's CUDA memory system works, check by check.
#include <algorithm>
#include <chrono>
#include <optional>
#include <cstdlib>
#include <future>
#include <tuple>

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "command.hpp"
#include "util/system_root.hpp"
#include "doctor/budget.hpp"
#include "doctor/busy.hpp"
#include "doctor/registry.hpp"
#include "gpu/device/devices.hpp"
#include "doctor/doctor_results.hpp"
#include "doctor_views.hpp"
#include "doctor/runner.hpp"
#include "util/phase_timing.hpp"
#include "util/user_group.hpp"
#include "imex/imex_service.hpp"
#include "command_table.hpp"
#include "shared_gpu.hpp"

namespace cumemctl::cmd {
using namespace gpu;
namespace {

using namespace cumemctl::doctor;

// The user whose channel access doctor judges: --user, else in a Slurm prolog the job's user
// (SLURM_JOB_USER), else "" (this process). An unknown --user is a usage error, before the driver loads;
// an unknown job user is the imex-channels check's failure (a prolog's usage error would tell Slurm
// nothing).
std::string job_user(const std::string& user) {
    if (!user.empty()) {
        resolve_owner(user, "--user");
        return user;
    }
    const char* context = std::getenv("SLURM_SCRIPT_CONTEXT");
    const char* job_user = std::getenv("SLURM_JOB_USER");
    if (context != nullptr && std::string_view(context) == "prolog_slurmd" && job_user != nullptr) return job_user;
    return "";
}

// The options as typed.
struct DoctorCliOptions {
    std::string checks = "all";
    std::string skip;      // --skip: checks not to run
    bool verbose = false;  // --verbose: the table of every result, not the matrix
    std::string devices;
    bool list = false;
    std::string imex_config, imex_ctl, user;
    bool expect_idle = false;
    bool quick = false;
    double timeout = kDefaultBudgetSeconds;
    int expect_gpus = -1;
    std::string expect_driver;
    std::string expiry;  // --expiry DURATION (with --format nfd)
    std::string output;  // --output FILE
    double bandwidth_warn = kDefaultBandwidthWarn;
    double bandwidth_fail = kDefaultBandwidthFail;

    // The checks and devices parsed before the driver is loaded (usage errors).
    DoctorOptions check() const {
        DoctorOptions options;
        auto parsed = parse_check_list(checks);
        if (checks != "all") options.checks = parsed;
        if (quick && checks != "all") require_quick(parsed);
        if (!skip.empty()) {
            // --skip: the checks of --checks (or all of them) but these.
            const auto skipped = parse_check_list(skip);
            std::erase_if(parsed, [&](const std::string& id) {
                return std::find(skipped.begin(), skipped.end(), id) != skipped.end();
            });
            if (parsed.empty()) {
                throw Error(ExitCode::usage, fmt::format("--skip {} leaves no check to run", skip),
                            "skip fewer checks, or give --checks");
            }
            options.checks = parsed;
        }
        options.quick = quick;
        options.devices = parse_device_list(devices);
        options.expect_idle = expect_idle;
        if (!(timeout > 0) || timeout > 86400) {
            throw Error(
                ExitCode::usage, fmt::format("invalid --timeout {:g}: seconds above 0 and at most a day", timeout),
                fmt::format("the default, {:g} s, fits Slurm's 60 s limit on a health check", kDefaultBudgetSeconds));
        }
        options.budget_seconds = timeout;
        if (!(bandwidth_fail >= 0) || !(bandwidth_warn <= 1) || bandwidth_fail > bandwidth_warn) {
            throw Error(ExitCode::usage,
                        fmt::format("invalid --bandwidth-fail {:g} and --bandwidth-warn {:g}: fractions of a limit, "
                                    "0 <= fail <= warn <= 1",
                                    bandwidth_fail, bandwidth_warn),
                        fmt::format("the defaults are --bandwidth-fail {:g} and --bandwidth-warn {:g}",
                                    kDefaultBandwidthFail, kDefaultBandwidthWarn));
        }
        options.bandwidth_warn = bandwidth_warn, options.bandwidth_fail = bandwidth_fail;
        if (expect_gpus >= 0) options.expect_gpus = expect_gpus;
        options.expect_driver = expect_driver;
        options.sysroot = system_root("kernel log, /proc/devices and /dev");
        // As root, nvidia-imex-ctl (given, or found under the system root) is one that only root can change,
        // and a missing one in a folder that others can add to is refused before it is said to be missing.
        const std::string ctl = !imex_ctl.empty() ? imex_ctl : imex::find_imex_ctl(options.sysroot);
        if (!ctl.empty()) (void)imex::open_imex_ctl(ctl);
        if (!imex_ctl.empty() && ::access(imex_ctl.c_str(), X_OK) != 0) {
            throw Error(ExitCode::usage, fmt::format("invalid --imex-ctl '{}': {}", imex_ctl, std::strerror(errno)),
                        "give the path of an nvidia-imex-ctl this user may run, or leave --imex-ctl out");
        }
        options.imex_config = imex_config, options.imex_ctl = imex_ctl;
        options.user = job_user(user);
        return options;
    }
};

// --expiry's DURATION: whole seconds, minutes, hours or days ("90s", "30m", "2h", "1d"), above 0 and at
// most a year. A usage error otherwise, or without --format nfd.
std::optional<std::chrono::seconds> parse_expiry(const std::string& text, const Globals& globals) {
    if (text.empty()) return std::nullopt;
    if (globals.output != OutputFormat::nfd) {
        throw Error(ExitCode::usage, "--expiry goes with --format nfd",
                    "give --format nfd (the labels' expiry-time), or leave --expiry out");
    }
    std::size_t used = 0;
    long long n = 0;
    try {
        n = std::stoll(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    const std::string unit = text.substr(used);
    const long long scale = unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : unit == "d" ? 86400 : 0;
    if (used == 0 || text[0] == '-' || text[0] == '+' || scale == 0 || n <= 0 || n > 366LL * 86400 / scale) {
        throw Error(
            ExitCode::usage,
            fmt::format("invalid --expiry '{}': a whole number and s, m, h or d, at most a year", text),
            "e.g. --expiry 2h: node-feature-discovery drops the labels 2 hours after this run unless it runs again");
    }
    return std::chrono::seconds(n * scale);
}

// --output's FILE: the report for a program, written atomically; never the table.
void check_output(const std::string& output, const Globals& globals) {
    if (output.empty()) return;
    if (globals.output == OutputFormat::table) {
        throw Error(ExitCode::usage, "--output writes a format for programs, not the table",
                    "give --format nfd, junit, json, prometheus or line with --output");
    }
}

void fill_report(Report& report, const DoctorRun& run, bool verbose) {
    DoctorViews results(run, verbose);
    const CheckStatus status = results.status();
    report.set_results(std::move(results));
    if (!report.driver.loaded) {
        report.add_error(
            Problem{.exit_code = ExitCode::unavailable,
                    .message = "no usable CUDA driver: " + report.driver.error,
                    .remedy = "install the NVIDIA driver, or point --libcuda (or CUMEMCTL_LIBCUDA) at libcuda.so.1"});
    } else if (status_fails(status)) {
        report.mark_failed();
    }
}

// --list-checks writes the list of the checks, as a table or as JSON, on stdout or in --output's file; the
// formats of a run's results (nfd, prometheus, junit, csv, line) and --expiry have nothing of it to
// write, so they are usage errors, not a made-up run's output.
void check_list_options(const DoctorCliOptions& opts, const Globals& globals) {
    if (globals.output != OutputFormat::table && globals.output != OutputFormat::json) {
        throw Error(ExitCode::usage,
                    fmt::format("--list-checks writes a table or JSON, not --format {}", globals.format),
                    "leave --format out (the table), or give --json");
    }
    if (!opts.expiry.empty()) {
        throw Error(ExitCode::usage, "--expiry goes with a run's --format nfd, not with --list-checks",
                    "leave --expiry out");
    }
    if (!opts.output.empty() && globals.output != OutputFormat::json) {
        throw Error(ExitCode::usage, "--list-checks --output writes JSON, not the table",
                    "give --json with --output, or leave --output out");
    }
}

// Whether a result of `run` on GPU `ordinal` names process `pid` as a holder already (busy, or a
// failure with --expect-idle): the frame's shared-GPU warning does not name it again.
bool named_busy(const DoctorRun& run, int ordinal, unsigned pid) {
    return std::any_of(run.results.begin(), run.results.end(),
                       [&](const CheckResult& r) { return r.device == ordinal && names_holder(r.outcome, pid); });
}

// The run in the frame: the driver and NVML loaded (NVML on a thread of its own meanwhile), each check
// said on the progress line, and the measured GPUs watched for sharers, whose warnings go to `shared`.
DoctorRun run_in_frame(const Globals& globals, const DoctorOptions& options, Progress& progress, Report& shared) {
    std::shared_future<nvml::Library> nvml_load = std::async(std::launch::async, [&globals, &progress] {
        progress.watch("loading NVML");
        return open_nvml(globals, true);
    });
    Driver driver = open_driver(globals);
    driver.watch_calls();
    progress.set_driver(driver.info());
    std::optional<SharedGpuWatch> watch;
    RunHooks hooks;
    hooks.measuring = [&](const std::vector<int>& devices) {
        if (running_does(Does::measures)) watch.emplace(driver.api(), nvml_load.get(), devices, "doctor");
    };
    hooks.doing = [](std::string what) { progress_say(std::move(what)); };
    DoctorRun run = run_doctor(
        driver, options, [&nvml_load] { return &nvml_load.get(); }, &progress, hooks);
    if (watch) {
        watch->report_to(shared, [&run](int ordinal, unsigned pid) { return named_busy(run, ordinal, pid); });
        mark_phase("doctor: the shared-GPU watch's last sample");
    }
    return run;
}

Report list_checks(const DoctorCliOptions& opts, const Globals& globals) {
    return run_guarded("doctor", [&](Report& report) {
        check_list_options(opts, globals);
        report.set_results(CheckList{});
    });
}

Report run_doctor_command(const DoctorCliOptions& opts, const Globals& globals) {
    if (opts.list) {
        Report list = list_checks(opts, globals);
        if (list.exit_code != ExitCode::usage) list.delivery.output_file = opts.output;
        return list;
    }
    std::optional<std::chrono::seconds> expiry;
    Report result = run_checked("doctor", opts, [&](Report& report, const DoctorOptions& options) {
        expiry = parse_expiry(opts.expiry, globals);
        check_output(opts.output, globals);
        // The whole run on a thread of its own, under the time budget: doctor loads the driver without
        // initialising it (the driver check says what is wrong with it), and NVML (for memory-health) on
        // a thread of its own meanwhile; every driver and NVML call is watched, so that one that never
        // returns is named.
        auto progress = std::make_shared<Progress>();
        plan_progress(*progress, options);
        // The frame's watch on the measured GPUs (shared_gpu.hpp) writes its warnings here, read once the
        // run has ended in time (a run past its budget leaves its thread behind).
        auto shared = std::make_shared<Report>();
        const ProgressLine line(shows_progress(globals), "doctor");
        const BudgetedRun done = run_within_budget(
            options.budget_seconds, progress,
            [globals, options, progress, shared] { return run_in_frame(globals, options, *progress, *shared); });
        report.driver = progress->driver().value_or(DriverInfo{
            choose_libcuda(globals.libcuda), false, 0, "the driver library did not load within the time budget"});
        DoctorRun run = done.run;
        run.quick = options.quick;  // a run past its budget was built from its progress, which knows no level
        fill_report(report, run, opts.verbose);
        if (!done.timed_out) {
            for (Problem& w : shared->warnings) report.warnings.push_back(std::move(w));
        }
        report.delivery.end_without_unwinding = done.timed_out;
    });
    // A refused command line, or a run that SIGINT or SIGTERM stopped, writes no file: what was there stays.
    if (result.exit_code != ExitCode::usage && result.exit_code != ExitCode::interrupted &&
        result.exit_code != ExitCode::terminated) {
        result.delivery.output_file = opts.output;
        if (expiry) result.expires = result.started + *expiry;
    }
    return result;
}

}  // namespace

void register_doctor(CLI::App& root, const Globals& globals, Runner& runner) {
    auto opts = std::make_shared<DoctorCliOptions>();
    CLI::App* app =
        root.add_subcommand("doctor", "check that this node's CUDA memory system works (exit 1 on a failure)");
    std::vector<std::string> ids{"all"};
    for (const auto& c : check_catalogue()) ids.emplace_back(c.id);
    app->add_option("--checks", opts->checks,
                    "the checks to run, separated by commas, or all (--list-checks lists them)")
        ->type_name(fmt::format("LIST:{{{}}}", fmt::join(ids, ",")))
        ->capture_default_str();
    app->add_option("--skip", opts->skip, "checks not to run, separated by commas (the others of --checks run)")
        ->type_name("LIST");
    add_device_option(*app, opts->devices);
    app->add_flag("-v,--verbose", opts->verbose,
                  "the table of every result with its time and reason, instead of the check x GPU matrix");
    app->add_flag("--list-checks", opts->list, "list the checks and what each one checks, and run none");
    app->add_option("--imex-config", opts->imex_config, "the IMEX settings file (imex-domain)")
        ->type_name("PATH")
        ->default_str("/etc/nvidia-imex/config.cfg");
    app->add_option("--imex-ctl", opts->imex_ctl, "the nvidia-imex-ctl to ask (imex-domain)")->type_name("PATH");
    app->add_option("--user", opts->user,
                    "judge the IMEX channel nodes for this user, not this process (default in a Slurm prolog: "
                    "the job's user, SLURM_JOB_USER)")
        ->type_name("USER");
    app->add_option("--timeout", opts->timeout,
                    "answer within SECONDS whatever the GPU does: checks not finished are timeout (exit 1); "
                    "the default is CUMEMCTL_DOCTOR_TIMEOUT where it is set")
        ->type_name("SECONDS")
        ->envname("CUMEMCTL_DOCTOR_TIMEOUT")
        ->capture_default_str();
    app->add_option("--expect-gpus", opts->expect_gpus, "the node has N GPUs: CUDA seeing another number fails")
        ->type_name("N")
        ->check(CLI::Range(0, 1 << 16));
    app->add_option("--expect-driver", opts->expect_driver,
                    "the node has this driver (580.159.04): another version fails")
        ->type_name("VERSION");
    app->add_flag("--quick", opts->quick,
                  "only the checks that need no context: driver, devices, capabilities, memory health, fabric, "
                  "IMEX channels and domain, inventory, gpudirect (attributes and modules), xid (safe beside "
                  "jobs, every minute)");
    app->add_option("--expiry", opts->expiry,
                    "with --format nfd: node-feature-discovery drops the labels this long after the run (90s, 30m, "
                    "2h, 1d) unless a newer run replaced them")
        ->type_name("DURATION");
    app->add_option("--output", opts->output,
                    "write the report to FILE instead of stdout, atomically (a temporary file, fsync, rename): "
                    "NFD's features.d, node_exporter's textfile folder")
        ->type_name("FILE");
    app->add_option("--bandwidth-warn", opts->bandwidth_warn,
                    "host-bandwidth and memory-bandwidth warn below this fraction of the path's limit")
        ->type_name("RATIO")
        ->capture_default_str();
    app->add_option("--bandwidth-fail", opts->bandwidth_fail, "... and fail below this fraction")
        ->type_name("RATIO")
        ->capture_default_str();
    app->add_flag("--expect-idle", opts->expect_idle,
                  "no other process should use the GPUs (prolog, epilog): memory they hold is a failure, not busy");
    app->callback(
        [opts, &globals, &runner] { runner = [opts, &globals] { return run_doctor_command(*opts, globals); }; });
}

}  // namespace cumemctl::cmd
