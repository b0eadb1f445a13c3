#include "imex/imex_setup.hpp"

#include <cerrno>
#include <utility>

#include <fmt/format.h>

#include "base/enum_words.hpp"
#include "base/interrupt.hpp"
#include "base/setting.hpp"
#include "imex/channel_dir.hpp"
#include "imex/proc_devices.hpp"
#include "util/index_list.hpp"
#include "util/system_root.hpp"
#include "util/trusted_file.hpp"

namespace cumemctl::imex {
namespace {

constexpr const char* kKernelProcDevices = "/proc/devices";

// The IMEX channels' major in the text of a /proc/devices read from `path`.
int major_in(const std::string& path, const std::string& text) {
    const std::optional<int> major = find_char_major(text, kImexChannelsDeviceName, path);
    if (!major || *major == 0) {
        throw Error(Problem{
            .exit_code = ExitCode::unavailable,
            .message = fmt::format("{} lists no character device '{}'", path, kImexChannelsDeviceName),
            .cause = "the NVIDIA driver registers IMEX channels only when it is loaded and supports them",
            .remedy = "load an NVIDIA kernel module with IMEX channel support (modprobe nvidia), then run again"});
    }
    return *major;
}

// The IMEX channels' major: the kernel's under this system's own root (`real`), else --proc-devices's.
int read_major(const ImexSetupRequest& request, bool real) {
    const std::string remedy =
        fmt::format("load the NVIDIA kernel module (modprobe nvidia), or point {} at a copy of /proc/devices",
                    setting_name(Setting::proc_devices));
    if (real || request.proc_devices == kKernelProcDevices) require_real_system(kKernelProcDevices);
    const int major = major_in(request.proc_devices,
                               read_trusted_text(request.proc_devices, setting_name(Setting::proc_devices), remedy));
    if (!real || request.proc_devices == kKernelProcDevices) return major;
    // Under the real /dev, a node's number is the kernel's: a copy may only agree with it.
    const int kernel = major_in(kKernelProcDevices, read_trusted_text(kKernelProcDevices, "/proc/devices", remedy));
    if (kernel != major) {
        throw Error(
            Problem{.exit_code = ExitCode::permission,
                    .message = fmt::format("refusing {} {}: it gives '{}' the major {}, and the kernel's {} gives {}",
                                           setting_name(Setting::proc_devices), request.proc_devices,
                                           kImexChannelsDeviceName, major, kKernelProcDevices, kernel),
                    .cause = "device nodes under the real /dev take their number from the kernel, never from a file",
                    .remedy = fmt::format("leave {} out (a copy serves only a test's {})",
                                          setting_name(Setting::proc_devices), setting_name(Setting::dev_root))});
    }
    return major;
}

void read_params(const ImexSetupRequest& request, ImexSetupResult& result) {
    const std::string text = read_trusted_text(
        request.params, setting_name(Setting::params_file),
        fmt::format("load the NVIDIA kernel module (modprobe nvidia), or point {} at a copy of its params file",
                    setting_name(Setting::params_file)));
    result.params = parse_nvidia_params(text, request.params);
    result.count_from_params = result.params.imex_channel_count.has_value();
    result.count = result.params.imex_channel_count.value_or(kDefaultImexChannelCount);
    if (!result.count_from_params) {
        Problem w{
            .exit_code = ExitCode::ok,
            .message = fmt::format("{} does not list ImexChannelCount: assuming the driver's default of {} channels",
                                   request.params, kDefaultImexChannelCount),
            .remedy = fmt::format("point {} at the params file of the loaded driver to use its count",
                                  setting_name(Setting::params_file))};
        result.warnings.push_back(std::move(w));
    }
    if (result.params.create_imex_channel0.value_or(false)) {
        Problem w{.exit_code = ExitCode::ok,
                  .message =
                      "the driver was loaded with CreateImexChannel0=1: it makes channel0 itself, open to every user, "
                      "so every user can share fabric memory through it",
                  .remedy = fmt::format("for one channel per user, load the nvidia module with "
                                        "NVreg_CreateImexChannel0=0 and give each user a channel of their own ({})",
                                        setting_name(Setting::channel_owner))};
        result.warnings.push_back(std::move(w));
    }
}

std::vector<int> select_channels(const ImexSetupRequest& request, const ImexSetupResult& result) {
    try {
        return parse_index_list(request.channels, static_cast<int>(result.count), "channel");
    } catch (Error& e) {
        e.problem().cause = result.count_from_params
                                ? fmt::format("ImexChannelCount in {} is {}", request.params, result.count)
                                : fmt::format("{} channels is the driver's default", result.count);
        throw;
    }
}

void choose_owner_and_mode(const ImexSetupRequest& request, ImexSetupResult& result) {
    const NvidiaParams& p = result.params;
    result.owner =
        request.owner ? *request.owner : owner_of(p.device_file_uid.value_or(0), p.device_file_gid.value_or(0));
    if (request.mode) {
        result.mode = *request.mode;
        result.mode_source = ModeSource::mode;
    } else if (request.owner) {
        result.mode = 0600;
        result.mode_source = ModeSource::owner;
    } else {
        result.mode = static_cast<mode_t>(p.device_file_mode.value_or(kDefaultDeviceFileMode) & 0777);
        result.mode_source = p.device_file_mode ? ModeSource::device_file_mode : ModeSource::driver_default;
    }
}

// (A folder that others can write never gets here: open_channel_dir refuses it.)
void describe_directory(const ChannelDir& dir, bool removing, ImexSetupResult& result) {
    ChannelDirOutcome& d = result.directory;
    d.path = dir.path;
    d.exists = dir.fd.valid();
    d.state = dir.state;
    d.action = dir.created ? Action::created : d.exists || removing ? Action::unchanged : Action::planned;
}

bool is_permission(int error) {
    return error == EPERM || error == EACCES;
}

// Works through the channels in order; after a permission failure the rest are not attempted, and a
// channel folder that this run made is removed again.
void process_channels(const ImexSetupRequest& request, const std::vector<int>& selected, ChannelDir& dir,
                      ImexSetupResult& result) {
    // Access changes only when asked for: --force, or an explicit owner or mode (the Slurm prolog's).
    const PlanOptions options{request.remove, request.force, request.owner.has_value() || request.mode.has_value()};
    const bool changing = !request.check && !request.dry_run;
    const int fd = dir.fd.valid() ? dir.fd.get() : -1;
    if (changing && fd >= 0) {
        for (const auto& name : remove_stale_temporaries(fd)) {
            result.warnings.push_back(Problem{
                .exit_code = ExitCode::ok,
                .message =
                    fmt::format("removed {}/{}: a temporary node that an interrupted run left", dir.path, name)});
        }
    }
    bool stopped = false;
    for (int channel : selected) {
        // A stop request (SIGINT, SIGTERM) ends the run between channels: every node is whole.
        check_interrupted();
        const NodeSpec want{channel, static_cast<unsigned>(result.major), result.owner.uid, result.owner.gid,
                            result.mode};
        ChannelOutcome out;
        if (stopped) {
            out.want = want;
            out.action = Action::error;
            out.error = "not attempted after the permission failure";
        } else {
            out = changing && fd >= 0 ? apply_channel(fd, want, options) : preview_channel(fd, want, options);
            stopped = out.action == Action::error && is_permission(out.error_number);
        }
        result.channels.push_back(std::move(out));
    }
    if (stopped && dir.created) {
        undo_channel_dir(dir);
        result.directory.action = Action::error;
        result.directory.exists = dir.created;
    }
}

// The channel's node.
std::string node_path(const ImexSetupResult& result, const ChannelOutcome& out) {
    return fmt::format("{}/{}", result.directory.path, channel_name(out.want.channel));
}

// "" for one, " (and 4 more)" for five.
std::string and_more(std::size_t count) {
    return count > 1 ? fmt::format(" (and {} more)", count - 1) : "";
}

void summarise(const ImexSetupRequest& request, ImexSetupResult& result) {
    const ChannelOutcome* first_error = nullptr;
    const ChannelOutcome* first_refusal = nullptr;
    std::size_t errors = 0, refusals = 0, differences = 0;
    bool wrong_device = false;
    for (const auto& c : result.channels) {
        if (c.action == Action::error && ++errors == 1) first_error = &c;
        if (c.action == Action::refused && ++refusals == 1) first_refusal = &c;
        if (c.action == Action::refused &&
            (c.found.kind == NodeKind::char_device || c.found.kind == NodeKind::block_device)) {
            wrong_device = true;
        }
        if (c.action == Action::planned) ++differences;
    }
    if (first_error != nullptr) {
        const bool permission = is_permission(first_error->error_number);
        result.errors.push_back(Problem{
            .exit_code = permission ? ExitCode::permission : ExitCode::failed,
            .message = fmt::format("{}: {}{}", node_path(result, *first_error), first_error->error, and_more(errors)),
            .remedy = permission ? fmt::format("run imex-setup as root: making, changing and removing device nodes "
                                               "needs CAP_MKNOD, CAP_CHOWN and write access to /dev ({} and {} need "
                                               "neither)",
                                               setting_name(Setting::check_only), setting_name(Setting::dry_run))
                                 : "check the file system that holds the channel folder"});
    }
    if (first_refusal != nullptr) {
        result.errors.push_back(Problem{
            .exit_code = ExitCode::failed,
            .message = fmt::format("{}: refused: {}{}", node_path(result, *first_refusal), first_refusal->plan.detail,
                                   and_more(refusals)),
            .remedy = wrong_device
                          ? fmt::format("{} replaces (or removes) a device node of the wrong type or number; anything "
                                        "else at a channel's path must be moved away by hand",
                                        setting_name(Setting::replace_nodes))
                          : "imex-setup never touches anything but a device node: move it away by hand and run again"});
    }
    if (request.check && differences > 0) {
        result.errors.push_back(Problem{
            .exit_code = ExitCode::failed,
            .message = fmt::format("{} of {} channels differ from what was asked", differences, result.channels.size()),
            .remedy = fmt::format("run the same command without {} to make the changes ({} shows them)",
                                  setting_name(Setting::check_only), setting_name(Setting::dry_run))});
    }
}

// Where a channel's mode came from when no setting gave it; a setting's is the setting's name.
constexpr auto kModeSourceWords = enum_words<ModeSource>(
    {{ModeSource::device_file_mode, "DeviceFileMode"}, {ModeSource::driver_default, "default"}}, "default");

}  // namespace

ImexSetupResult run_imex_setup(const ImexSetupRequest& request) {
    ImexSetupResult result;
    DevRoot root = open_dev_root(request.dev_root);
    result.major = read_major(request, root.real);
    read_params(request, result);
    const std::vector<int> selected = select_channels(request, result);
    choose_owner_and_mode(request, result);
    const bool changing = !request.check && !request.dry_run;
    ChannelDir dir = open_channel_dir(std::move(root), changing && !request.remove);
    describe_directory(dir, request.remove, result);
    process_channels(request, selected, dir, result);
    summarise(request, result);
    return result;
}

std::string mode_source_name(ModeSource source) {
    if (source == ModeSource::mode) return setting_name(Setting::channel_mode);
    if (source == ModeSource::owner) return setting_name(Setting::channel_owner);
    return std::string(kModeSourceWords.word(source));
}

}  // namespace cumemctl::imex
