// A read-only look at a node's IMEX channels (what fabric handles need) and at whether more than one
// person uses the node. Nothing here changes the system; imex-setup (src/imex/) provisions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "imex/channel_folder.hpp"

namespace cumemctl::doctor {

// The node's IMEX channel set-up.
struct ChannelSurvey {
    bool proc_devices_read = false;      // /proc/devices could be read
    std::string unreadable;              // why /proc/devices or the params file could not be parsed
    std::string refused;                 // root's refusal of one that others could change (trusted_file)
    std::optional<unsigned> major;       // the nvidia-caps-imex-channels character major, if registered
    std::optional<int> channel_count;    // ImexChannelCount of /proc/driver/nvidia/params
    std::optional<int> create_channel0;  // CreateImexChannel0 of the same
    bool dir_exists = false;
    std::vector<imex::ChannelEntry> nodes;  // every entry of the folder (src/imex/channel_folder), by channel
    // The file system type when the folder is a mount point of its own in /proc/self/mountinfo (Slurm's
    // switch/nvidia_imex mounts a tmpfs there in each job step's mount namespace), "" when it is not.
    std::string dir_mount_type;
};

// The file system type mounted at `path` according to a /proc/self/mountinfo text (the last mount there,
// which hides those before it), or "" when nothing is mounted at exactly that path.
std::string mount_type_at(std::string_view mountinfo, std::string_view path);

// Whether the folder is private to this process's mount namespace as Slurm's switch/nvidia_imex makes it
// for a job step: a tmpfs mounted on the folder itself that holds one entry, a channel node.
bool private_step_folder(const ChannelSurvey& survey);

// Surveys /proc/devices, /proc/driver/nvidia/params (parsed by src/imex/, as imex-setup reads them)
// and the channel folder under `sysroot`. Never throws: what cannot be parsed is in `unreadable`.
ChannelSurvey survey_channels(const std::string& sysroot);

// What a channel node is wrong in ("" when it is a sound channel node): type, major, minor.
std::string channel_node_problem(const imex::ChannelEntry& node, const ChannelSurvey& survey);

// Whether more than one person uses the node: two or more login accounts (uid >= 1000, a login
// shell) in /etc/passwd, or accounts from a directory service (sss, ldap, nis, winbind) in
// /etc/nsswitch.conf. Unreadable files count as multi-user. `why` says what decided it.
struct UserSurvey {
    bool multi_user = true;
    std::string why;
};
UserSurvey survey_users(const std::string& sysroot);

// The survey as JSON for the check's details.
nlohmann::json to_json(const ChannelSurvey& survey);

// Permission bits as ls -l shows the octal: "0600".
std::string octal_mode(unsigned mode);

}  // namespace cumemctl::doctor
