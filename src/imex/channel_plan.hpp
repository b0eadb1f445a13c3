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
    replace,  // a device node of the wrong type or number, and force: make the right one over it
    remove,   // removal asked for: unlink it
    refuse,   // not ours to change: anything but a device node, or the wrong device without force
};

// What the caller asks for besides the node itself.
struct PlanOptions {
    bool remove = false;  // the node should not exist
    bool force = false;   // a device node of the wrong type or number may be replaced (or removed)
};

// One node's plan: the change and, for people, what differs ("owner 0:0 -> 65534:65534"); a refusal's
// detail may name the {force} property (imex/imex_words fills it).
struct ChannelPlan {
    Change change = Change::none;
    std::string detail;
};

// Compares the node found with the node wanted. A node is right when it is a character device with the
// wanted major and minor, owner, group and mode. Anything that is not a character or block device is
// refused whatever the options; a device node of the wrong type or number is refused without force.
ChannelPlan plan_channel(const NodeSpec& want, const NodeState& have, const PlanOptions& options);

// The name of a change for JSON and tables: "none", "create", "fix", "replace", "remove", "refuse".
std::string_view change_name(Change change);

}  // namespace cumemctl::imex
