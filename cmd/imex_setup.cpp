// `cumemctl imex-setup`: makes, checks and removes IMEX channel nodes, and verifies fabric handles.
#include <optional>

#include <fmt/format.h>

#include "base/setting.hpp"
#include "command.hpp"
#include "gpu/device/device_selector.hpp"
#include "gpu/diagnosis/channel_verify.hpp"
#include "imex/imex_setup.hpp"
#include "imex_setup_results.hpp"
#include "util/file_mode.hpp"
#include "util/index_list.hpp"
#include "util/size.hpp"

namespace cumemctl::cmd {
using namespace gpu;
using namespace imex;
namespace {

struct ImexSetupOptions {
    std::string channel = "0";
    std::string channels;
    bool channels_given = false;  // --channels was on the command line (even as "")
    bool all = false;
    std::string owner;
    std::string mode;
    bool force = false;
    bool check_only = false;  // --check
    bool dry_run = false;
    bool remove = false;
    bool verify = false;
    std::string device = "0";
    std::string proc_devices = "/proc/devices";
    std::string params = "/proc/driver/nvidia/params";
    std::string dev_root = "/";

    // The request and --verify's device parsed before anything is touched (usage errors).
    struct Checked {
        ImexSetupRequest request;
        std::optional<DeviceList> verify_device;  // with --verify: the one device, parsed once
    };
    Checked check() const;
};

ImexSetupOptions::Checked ImexSetupOptions::check() const {
    const ImexSetupOptions& o = *this;
    Checked checked;
    if (o.verify) {
        checked.verify_device = parse_device_list(o.device);
        if (!checked.verify_device->names_one()) {
            throw Error(ExitCode::usage, fmt::format("--verify takes one device, not '{}'", o.device),
                        "give --device N, a UUID (GPU-...) a PCI bus id or nvidiaN");
        }
    }
    ImexSetupRequest& r = checked.request;
    r.proc_devices = o.proc_devices;
    r.params = o.params;
    r.dev_root = o.dev_root;
    r.channels = o.all ? "all" : o.channels_given ? o.channels : o.channel;
    if (!o.all && !o.channels_given && o.channel.find_first_of(",-") != std::string::npos) {
        throw Error(ExitCode::usage, fmt::format("invalid --channel '{}': one channel number", o.channel),
                    "give one number to --channel, a list or range to --channels, or --all");
    }
    if (!o.owner.empty()) r.owner = resolve_owner(o.owner, setting_name(Setting::channel_owner));
    if (!o.mode.empty()) r.mode = parse_mode(o.mode, "--mode");
    r.force = o.force;
    r.check = o.check_only;
    r.dry_run = o.dry_run;
    r.remove = o.remove;
    return checked;
}

// Runs --verify's child as the request's owner on `device_list`'s device.
ImexVerifyOutcome verify_as_owner(const DeviceList& device_list, const Globals& globals, const ImexSetupRequest& req,
                                  const std::string& channel_dir) {
    FabricVerifyRequest v;
    v.libcuda = choose_libcuda(globals.libcuda);
    v.imex_channel_dir = channel_dir;
    v.device = device_list.spec;  // the child parses it again, in its own process
    v.as = req.owner;
    ImexVerifyOutcome out;
    out.got = verify_fabric_in_child(v);
    out.as = owner_of(out.got.uid, out.got.gid);
    out.device = out.got.device ? out.got.device : device_list.ordinal();
    out.typed = device_list.spec;
    return out;
}

// --verify's error where the child failed; the driver it loaded.
void add_verify(const ImexVerifyOutcome& verify, Report& report) {
    const FabricVerifyResult& got = verify.got;
    report.driver = got.driver;
    if (got.problem) {
        Problem p = *got.problem;
        p.message = fmt::format("verify as {}: {}", format_owner(verify.as), p.message);
        report.add_error(std::move(p));
    }
}

Report run_imex_setup_command(const ImexSetupOptions& opts, const Globals& globals) {
    return run_checked("imex-setup", opts, [&](Report& report, const ImexSetupOptions::Checked& checked) {
        const ImexSetupRequest& req = checked.request;
        report.driver.error = "not loaded: imex-setup uses the driver only for --verify";
        ImexSetupResults results;
        results.request = req;
        results.result = run_imex_setup(req);
        const ImexSetupResult& result = results.result;
        report.set_results(results);  // what stays when --verify's child cannot be started
        for (const auto& w : result.warnings) report.warnings.push_back(w);
        for (const auto& e : result.errors) report.add_error(e);
        if (!checked.verify_device) return;
        results.verify = verify_as_owner(*checked.verify_device, globals, req, result.directory.path);
        add_verify(*results.verify, report);
        report.set_results(std::move(results));
    });
}

}  // namespace

void register_imex_setup(CLI::App& root, const Globals& globals, Runner& runner) {
    auto o = std::make_shared<ImexSetupOptions>();
    CLI::App* app = root.add_subcommand("imex-setup", "make, check or remove IMEX channel nodes, and verify them");
    auto* channel = app->add_option("--channel", o->channel, "the channel to set up (default 0)");
    auto* channels = app->add_option("--channels", o->channels, "channels: a list and ranges, e.g. 0-3,7");
    auto* all = app->add_flag("--all", o->all, "every channel below ImexChannelCount (or --channel, or --channels)");
    channel->excludes(channels, all);
    channels->excludes(all);
    auto* owner = app->add_option("--owner", o->owner, "USER[:GROUP] that owns the nodes (default mode becomes 0600)");
    auto* mode = app->add_option("--mode", o->mode, "octal mode of the nodes (default: the driver's DeviceFileMode)");
    app->add_flag("--force", o->force, "replace (or remove) device nodes of the wrong type or number");
    auto* check =
        app->add_flag("--check", o->check_only, "change nothing; exit 1 when anything differs (not with --dry-run)");
    auto* dry_run = app->add_flag("--dry-run", o->dry_run, "change nothing; show the plan");
    auto* remove =
        app->add_flag("--remove", o->remove, "remove the channels' nodes (not with --owner, --mode, --verify)");
    auto* verify = app->add_flag("--verify", o->verify, "prove fabric handles work (as --owner), in a child process");
    app->add_option("-d,--device", o->device,
                    "the device --verify uses: a CUDA ordinal, a UUID (GPU-...), a PCI bus id or nvidiaN (default 0)")
        ->needs(verify);
    app->add_option("--proc-devices", o->proc_devices, "the /proc/devices to read")->capture_default_str();
    app->add_option("--params", o->params, "the driver's params file to read")->capture_default_str();
    app->add_option("--dev-root", o->dev_root, "the folder that holds dev/")->capture_default_str();
    check->excludes(dry_run);
    remove->excludes(owner, mode, verify);
    app->callback([o, channels, &globals, &runner] {
        o->channels_given = channels->count() > 0;
        runner = [o, &globals] { return run_imex_setup_command(*o, globals); };
    });
}

}  // namespace cumemctl::cmd
