// Planning one channel node: the change that takes what was found to what was asked. Pure: no
// system calls, so every case is unit-tested.
#pragma once

#include <string>
#include <string_view>

#include "imex/channel_node.hpp"

namespace cumemctl::imex {

// What has to happen to one node.
enum class Change {
    none,     // it is as asked (or, removing, it is already absent)
    create,   // absent: make it
    fix,      // the right device with the wrong owner or mode: chown/chmod it
    keep,     // the right device with another owner or mode that is kept: changing it would widen access
    replace,  // a device node of the wrong type or number, and force: make the right one over it
    remove,   // removal asked for: unlink it
    refuse,   // not ours to change: anything but a device node, or the wrong device without force
};

// What the caller asks for besides the node itself.
struct PlanOptions {
    bool remove = false;  // the node should not exist
    bool force = false;   // a device node of the wrong type or number may be replaced (or removed)
    // An explicit owner or mode was given. With it, or with force, an owner or mode may change even where
    // that changes who may open the node; without both, only changes that widen no one's access are made.
    bool access_given = false;
};

// One node's plan: the change and, for people, what differs ("owner 0:0 -> 65534:65534"); a refusal's
// detail names force through setting_name.
struct ChannelPlan {
    Change change = Change::none;
    std::string detail;
};

// Compares the node found with the node wanted. A node is right when it is a character device with the
// wanted major and minor, owner, group and mode. Anything that is not a character or block device is
// refused whatever the options; a device node of the wrong type or number is refused without force. The
// right device with another owner or mode is fixed, unless the fix changes who may open it in a way that
// must be asked for (access_concern) and it was not: then it is kept, and the detail says why and names
// force, owner and mode through setting_name.
ChannelPlan plan_channel(const NodeSpec& want, const NodeState& have, const PlanOptions& options);

// Why giving a node `want`'s owner, group and mode must be asked for ("" when it need not): some user
// could read or write it who cannot now ("every user could read and write it", "uid 1000 could read
// it"), or a channel of its owner's own (one that its owner, not root, may open and not every user)
// would be taken from it ("uid 1000, its owner, could no longer read and write it"). Only read and write
// count (a device node has no use for the other bits); group members are
// judged by the group alone, so a new group that the mode grants anything counts as users gaining it.
std::string access_concern(const NodeState& have, const NodeSpec& want);

// The name of a change for JSON and tables: "none", "create", "fix", "keep", "replace", "remove",
// "refuse".
std::string_view change_name(Change change);

}  // namespace cumemctl::imex
