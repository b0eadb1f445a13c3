#include "imex/channel_folder.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "base/setting.hpp"
#include "util/user_group.hpp"

namespace cumemctl::imex {

int channel_number(std::string_view name) {
    if (name.rfind("channel", 0) != 0 || name.size() == 7) return -1;
    const std::string_view digits = name.substr(7);
    if (digits.size() > 1 && digits[0] == '0') return -1;
    int n = -1;
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    return ec == std::errc{} && ptr == digits.data() + digits.size() ? n : -1;
}

char node_type_letter(NodeKind kind) {
    switch (kind) {
        case NodeKind::char_device:
            return 'c';
        case NodeKind::block_device:
            return 'b';
        case NodeKind::directory:
            return 'd';
        case NodeKind::symlink:
            return 'l';
        case NodeKind::regular_file:
            return 'f';
        default:
            return '?';
    }
}

ChannelFolder read_channel_folder(const std::string& path) {
    ChannelFolder folder;
    folder.path = path;
    const int fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return folder;
    DIR* dir = fdopendir(fd);
    if (dir == nullptr) {
        close(fd);
        return folder;
    }
    folder.exists = true;
    while (const dirent* e = readdir(dir)) {
        const std::string name = e->d_name;
        if (name == "." || name == "..") continue;
        struct stat st {};
        if (fstatat(dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        const NodeState state = node_state_from_stat(st);
        ChannelEntry n;
        n.name = name;
        n.channel = channel_number(name);
        n.type = node_type_letter(state.kind);
        n.major = state.major;
        n.minor = state.minor;
        n.uid = state.uid;
        n.gid = state.gid;
        n.mode = state.mode;
        n.usable = n.type == 'c' && faccessat(dirfd(dir), e->d_name, R_OK | W_OK, AT_EACCESS) == 0;
        folder.entries.push_back(std::move(n));
    }
    closedir(dir);
    std::sort(folder.entries.begin(), folder.entries.end(), [](const ChannelEntry& a, const ChannelEntry& b) {
        return a.channel != b.channel ? a.channel < b.channel : a.name < b.name;
    });
    return folder;
}

bool holds_per_user_channels(const std::vector<ChannelEntry>& entries) {
    return std::any_of(entries.begin(), entries.end(), [](const ChannelEntry& e) {
        return e.type == 'c' && e.channel >= 0 && e.uid != 0 && (e.mode & 0006U) != 0006U;
    });
}

int first_free_channel(const std::vector<ChannelEntry>& entries, int first) {
    int channel = first;
    // Entries are sorted by channel number, so one pass finds the first gap.
    for (const ChannelEntry& e : entries) {
        if (e.channel == channel) ++channel;
    }
    return channel;
}

std::string per_user_setup_command(const std::vector<ChannelEntry>& entries) {
    // Root needs no channel of its own: it names the user to give one to.
    const Owner me = owner_of(::geteuid(), ::getegid());
    const std::string user = me.uid == 0 ? "USER" : me.user.empty() ? std::to_string(me.uid) : me.user;
    return per_user_setup_command(entries, user);
}

std::string per_user_setup_command(const std::vector<ChannelEntry>& entries, const std::string& user) {
    return "cumemctl " +
           command_line(Command::imex_setup, {{Setting::channel, std::to_string(first_free_channel(entries))},
                                              {Setting::channel_owner, user}});
}

std::string no_channel_remedy(ChannelNeed need, const std::string& per_user_setup) {
    if (need != ChannelNeed::any) {
        // A plain imex-setup keeps the channels there as they are (it never widens access), so this user
        // needs one of its own.
        return fmt::format("{}: as root, run '{}', then run this again",
                           need == ChannelNeed::per_user_node ? "this node gives each user an IMEX channel of their own"
                                                              : "give this user an IMEX channel of its own",
                           per_user_setup);
    }
    return fmt::format(
        "as root, run 'cumemctl {}' (channel0 for every user; 'cumemctl {}' for one user), check it "
        "with 'cumemctl {}', then run this again",
        command_line(Command::imex_setup), command_line(Command::imex_setup, {{Setting::channel_owner, "USER"}}),
        command_line(Command::imex_setup, {{Setting::check_only}, {Setting::verify}}));
}

bool channel_usable_by(const ChannelEntry& entry, unsigned uid, const std::vector<unsigned>& groups) {
    if (entry.type != 'c') return false;
    if (uid == 0) return true;
    // The kernel takes the first class that applies: owner, then group, then others.
    if (entry.uid == uid) return (entry.mode & 0600) == 0600;
    if (std::find(groups.begin(), groups.end(), entry.gid) != groups.end()) return (entry.mode & 0060) == 0060;
    return (entry.mode & 0006) == 0006;
}

std::vector<unsigned> user_groups(const std::string& name, unsigned gid) {
    std::vector<gid_t> list(64);
    int count = static_cast<int>(list.size());
    if (getgrouplist(name.c_str(), gid, list.data(), &count) < 0) {
        list.resize(static_cast<std::size_t>(count));
        if (getgrouplist(name.c_str(), gid, list.data(), &count) < 0) count = 0;
    }
    std::vector<unsigned> out{gid};
    for (int i = 0; i < count; ++i) {
        if (list[static_cast<std::size_t>(i)] != gid) out.push_back(list[static_cast<std::size_t>(i)]);
    }
    return out;
}

}  // namespace cumemctl::imex
