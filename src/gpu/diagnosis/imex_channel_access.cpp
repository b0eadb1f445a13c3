#include "gpu/diagnosis/imex_channel_access.hpp"

#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "base/setting.hpp"

namespace cumemctl::gpu {
using namespace imex;

ImexChannelAccess read_channel_access(const std::string& dir) {
    const ChannelFolder folder = read_channel_folder(dir);
    ImexChannelAccess a;
    a.dir = dir;
    a.dir_exists = folder.exists;
    for (const ChannelEntry& e : folder.entries) {
        if (e.name.rfind("channel", 0) != 0) continue;
        if (e.type != 'c') {
            a.not_devices.push_back(e.name);
            continue;
        }
        a.nodes.push_back(e.name);
        if (e.usable) a.accessible.push_back(e.name);
    }
    a.per_user = holds_per_user_channels(folder.entries);
    a.per_user_setup = per_user_setup_command(folder.entries);
    std::sort(a.nodes.begin(), a.nodes.end());
    std::sort(a.accessible.begin(), a.accessible.end());
    std::sort(a.not_devices.begin(), a.not_devices.end());
    return a;
}

std::string ImexChannelAccess::describe() const {
    if (!dir_exists) return fmt::format("{} does not exist", dir);
    if (!accessible.empty()) {
        return fmt::format("{}/{} is a channel node this process may read and write", dir, accessible.front());
    }
    if (!nodes.empty()) {
        return fmt::format("{}/{} exists but this process (uid {}) may not read and write it", dir, nodes.front(),
                           geteuid());
    }
    if (!not_devices.empty()) {
        return fmt::format("{} holds no channel node: {} is not a character device", dir, not_devices.front());
    }
    return fmt::format("{} holds no channel node", dir);
}

std::string ImexChannelAccess::remedy() const {
    // Channels this process may not open: this user needs one of its own.
    const imex::ChannelNeed need = per_user         ? imex::ChannelNeed::per_user_node
                                   : !nodes.empty() ? imex::ChannelNeed::of_its_own
                                                    : imex::ChannelNeed::any;
    return imex::no_channel_remedy(need, per_user_setup);
}

}  // namespace cumemctl::gpu
