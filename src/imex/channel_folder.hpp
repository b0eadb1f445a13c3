// The IMEX channel folder as the driver sees it: the one place that knows its path and reads its
// channels (imex-setup's apply lists it again only for its own stale temporaries).
// imex-setup provisions it (channel_dir.*, channel_apply.*), doctor surveys it and the diagnosis of a
// refused fabric handle describes it, all through this model.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "imex/channel_node.hpp"

namespace cumemctl::imex {

// Where the driver looks for channel nodes.
inline constexpr const char* kImexChannelDir = "/dev/nvidia-caps-imex-channels";

// The folder's name under dev/ ("nvidia-caps-imex-channels").
inline constexpr std::string_view kImexChannelDirName = std::string_view(kImexChannelDir).substr(5);

// One entry of the channel folder as found (links are not followed).
struct ChannelEntry {
    std::string name;    // "channel0"
    int channel = -1;    // N of channelN; -1 for any other name
    char type = '?';     // 'c' character device, 'b' block, 'd' folder, 'l' link, 'f' file, '?' other
    unsigned major = 0;  // device numbers (character and block devices)
    unsigned minor = 0;
    unsigned uid = 0;
    unsigned gid = 0;
    unsigned mode = 0;    // permission bits (07777)
    bool usable = false;  // a character device this process may read and write
};

// The folder: whether it exists (as a folder, not through a link) and every entry, sorted by channel
// number, then name (names that are not channelN first).
struct ChannelFolder {
    std::string path;
    bool exists = false;
    std::vector<ChannelEntry> entries;
};

// N of "channelN" (digits only, no leading zeros beyond "0"), or -1.
int channel_number(std::string_view name);

// The letter of ChannelEntry::type for a kind of node.
char node_type_letter(NodeKind kind);

// Reads the folder at `path` (opened without following links). Never throws: a folder that cannot be
// opened reads as not existing.
ChannelFolder read_channel_folder(const std::string& path);

// Whether the folder holds per-user channels, as imex-setup --owner and the Slurm prolog make them: a
// channel node owned by a user other than root that not every user may read and write.
bool holds_per_user_channels(const std::vector<ChannelEntry>& entries);

// The lowest channel number from `first` on that has no entry in the folder (channel 0 is left to the
// driver's CreateImexChannel0, so remedies start at 1).
int first_free_channel(const std::vector<ChannelEntry>& entries, int first = 1);

// Whether the user `uid`, a member of `groups` (its primary group included), may read and write the
// character device `entry` by its owner, group and mode (root may always), as the kernel decides it for
// that user's processes; ACLs aside.
bool channel_usable_by(const ChannelEntry& entry, unsigned uid, const std::vector<unsigned>& groups);

// The groups of user `name` whose primary group is `gid` (getgrouplist), `gid` first.
std::vector<unsigned> user_groups(const std::string& name, unsigned gid);

// The remedy that gives this process's user a channel of its own, in the form that widens no one
// else's access: "cumemctl imex-setup --channel 3 --owner alice" (the lowest free channel; the
// user's name, else its uid; USER when this process is root, which needs none).
std::string per_user_setup_command(const std::vector<ChannelEntry>& entries);
// The same for the user `user` (doctor --user).
std::string per_user_setup_command(const std::vector<ChannelEntry>& entries, const std::string& user);

// Where a channel this user's processes may open is needed.
enum class ChannelNeed {
    any,            // a channel for every user would do: imex-setup, with its check
    of_its_own,     // this user needs one of its own (the channels there are others', or the node has several users)
    per_user_node,  // the folder gives each user a channel of their own
};

// The one remedy for a process that can open no IMEX channel (create, pools, le-bind, doctor's
// imex-channels): what gives it one, as root, then "run this again". `per_user_setup`:
// per_user_setup_command's, for of_its_own and per_user_node.
std::string no_channel_remedy(ChannelNeed need, const std::string& per_user_setup);

}  // namespace cumemctl::imex
