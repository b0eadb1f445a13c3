// The fabric checks: IMEX channel nodes, read only.
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "base/setting.hpp"
#include "doctor/imex_survey.hpp"
#include "doctor/registry.hpp"
#include "util/user_group.hpp"

namespace cumemctl::doctor {
using namespace imex;
namespace {

// Whether any selected device supports fabric handles (a device that cannot be queried does not).
bool any_fabric_device(DoctorContext& ctx) {
    for (DeviceState* d : ctx.devices) {
        try {
            for (const auto& c : d->info().capabilities) {
                if (c.key == "fabric" && c.value.value_or(0) != 0) return true;
            }
        } catch (const std::exception&) {
            // the capabilities check reports it
        }
    }
    return false;
}

// How to make a channel when there is none (imex's one remedy): on a node of several users, one of
// this user's own (a channel open to every user is what the check then warns about), else channel 0.
std::string create_remedy(const ChannelSurvey& survey, const UserSurvey& users) {
    return imex::no_channel_remedy(users.multi_user ? imex::ChannelNeed::of_its_own : imex::ChannelNeed::any,
                                   per_user_setup_command(survey.nodes));
}

std::string describe(const ChannelEntry& n) {
    return fmt::format("{} (c {}:{}, uid {} gid {}, {})", n.name, n.major, n.minor, n.uid, n.gid, octal_mode(n.mode));
}

// A fail for the first channel node of the wrong type or numbers; the sound ones go into `good`.
std::optional<CheckOutcome> check_nodes(const ChannelSurvey& survey, std::vector<const ChannelEntry*>& good) {
    for (const auto& n : survey.nodes) {
        const std::string problem = channel_node_problem(n, survey);
        if (!problem.empty()) {
            return CheckOutcome::fail(
                problem + fmt::format(" in {}", imex::kImexChannelDir),
                fmt::format("replace it: sudo cumemctl {}; or remove it and sudo mknod {}/{} c {} {}",
                            command_line(Command::imex_setup, {{Setting::replace_nodes}}), imex::kImexChannelDir,
                            n.name, survey.major.value_or(0), n.channel));
        }
        if (n.channel >= 0) good.push_back(&n);
    }
    return std::nullopt;
}

// The warning when `user` (or, without one, this process) can open none of the channel nodes, with the
// command that gives it one of its own.
CheckOutcome none_usable(const ChannelSurvey& survey, const std::string& user, ChannelsEvidence details) {
    if (!user.empty()) {
        return CheckOutcome::warn(
            fmt::format("user {} can open none of the channel nodes: its fabric handles fail with "
                        "CUDA_ERROR_NOT_PERMITTED",
                        user),
            fmt::format("give {} a channel of its own (owner {}, mode 0600): sudo {}", user, user,
                        per_user_setup_command(survey.nodes, user)),
            std::move(details));
    }
    return CheckOutcome::warn(
        fmt::format("this user (uid {}) can open none of the channel nodes: fabric handles fail with "
                    "CUDA_ERROR_NOT_PERMITTED",
                    geteuid()),
        no_channel_remedy(ChannelNeed::of_its_own, per_user_setup_command(survey.nodes)), std::move(details));
}

// The warning when a channel node is open to every user on a node that several users share.
std::optional<CheckOutcome> open_to_every_user(const std::vector<const ChannelEntry*>& good, const UserSurvey& users,
                                               const ChannelsEvidence& details) {
    if (!users.multi_user) return std::nullopt;
    for (const ChannelEntry* n : good) {
        if ((n->mode & 0006) == 0) continue;
        return CheckOutcome::warn(
            fmt::format("{} is open to every user ({}) on a node with {}: all their processes can share fabric memory",
                        n->name, octal_mode(n->mode), users.why),
            fmt::format("give each user a channel of their own: sudo cumemctl {}",
                        command_line(Command::imex_setup, {{Setting::channel, std::to_string(n->channel)},
                                                           {Setting::channel_owner, "USER"}})),
            details);
    }
    return std::nullopt;
}

// The warning where the channels' major cannot be known: a file unreadable, /proc/devices not read, or
// no such device registered.
std::optional<CheckOutcome> unknown_major(const ChannelSurvey& survey, const ChannelsEvidence& details) {
    if (!survey.refused.empty()) {
        return CheckOutcome::warn(survey.refused, "make the file and the folders above it root's alone", details);
    }
    if (!survey.unreadable.empty()) {
        return CheckOutcome::warn(survey.unreadable, "report this file's text with your driver version", details);
    }
    if (!survey.proc_devices_read) {
        return CheckOutcome::warn("/proc/devices cannot be read, so the IMEX channel major is unknown",
                                  "run doctor where /proc is mounted (in a container: the host's /proc)", details);
    }
    if (!survey.major) {
        return CheckOutcome::warn("the driver registers no nvidia-caps-imex-channels device (see /proc/devices)",
                                  "use an NVIDIA driver with IMEX channel support; fabric handles need it", details);
    }
    return std::nullopt;
}

}  // namespace

CheckOutcome check_imex_channels(DoctorContext& ctx, DeviceState*) {
    if (!ctx.driver_ready()) return CheckOutcome::skip("the driver did not load or initialise (see the driver check)");
    if (ctx.devices.empty()) return CheckOutcome::skip("no CUDA device to use fabric handles with");
    if (!any_fabric_device(ctx)) {
        return CheckOutcome::skip("no device here supports fabric handles, so no IMEX channel is needed");
    }
    ChannelSurvey survey = survey_channels(ctx.options.sysroot);
    // doctor --user (or the Slurm job's user): the nodes as that user may open them, not this process.
    const std::string& user = ctx.options.user;
    if (!user.empty()) {
        const Owner who = resolve_owner(user, "user");
        const std::vector<unsigned> groups = user_groups(who.user.empty() ? user : who.user, who.gid);
        for (auto& n : survey.nodes) n.usable = channel_usable_by(n, who.uid, groups);
    }
    ChannelsEvidence details{survey, {}, {}, {}};
    if (!user.empty()) details.user = user;
    if (auto unknown = unknown_major(survey, details)) return *unknown;
    std::vector<const ChannelEntry*> good;
    if (auto broken = check_nodes(survey, good)) {
        broken->evidence = std::move(details);
        return *broken;
    }
    const UserSurvey users = survey_users(ctx.options.sysroot);
    details.multi_user = users.multi_user;
    details.multi_user_reason = users.why;
    if (good.empty()) {
        return CheckOutcome::warn(
            fmt::format("no IMEX channel node in {}: fabric handles fail with CUDA_ERROR_NOT_PERMITTED",
                        imex::kImexChannelDir),
            create_remedy(survey, users), details);
    }
    const auto usable = std::find_if(good.begin(), good.end(), [](const ChannelEntry* n) { return n->usable; });
    if (usable == good.end()) return none_usable(survey, user, std::move(details));
    // Slurm's switch/nvidia_imex (24.05 and later) gives each job step a tmpfs of its own on the folder,
    // in the step's mount namespace, holding only the job's channel with mode 0666: the namespace, not
    // the mode, keeps other jobs out.
    const bool private_folder = private_step_folder(survey);
    if (!private_folder) {
        if (auto shared = open_to_every_user(good, users, details)) return *shared;
    }
    if (private_folder) {
        return CheckOutcome::pass(
            fmt::format("{} usable; the folder is a tmpfs of its own holding only this channel: private to "
                        "this job step's mount namespace (as Slurm's switch/nvidia_imex makes it), whatever "
                        "the mode",
                        describe(**usable)),
            std::move(details));
    }
    return CheckOutcome::pass(
        fmt::format("{} usable; {} channel node{}", describe(**usable), good.size(), good.size() == 1 ? "" : "s"),
        std::move(details));
}

}  // namespace cumemctl::doctor
