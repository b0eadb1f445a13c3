// Changing channel nodes: look, plan, change, relative to the channel folder's descriptor. Node
// modes never depend on the umask, and a node appears only complete (made under a temporary name
// with its owner and mode, then renamed into place).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "imex/channel_plan.hpp"

namespace cumemctl::imex {

// What became of one channel (the report's "action").
// kept: the right device whose owner or mode differ from what was asked, left as it is because changing
// them would change who may open it and that was not asked for (channel_plan's Change::keep).
enum class Action { created, unchanged, kept, fixed, replaced, removed, planned, refused, error };

// The name of an action for JSON and tables: "created", "unchanged", ...
std::string_view action_name(Action action);

// One channel's outcome: what was asked, what was found, the plan, and what was done.
struct ChannelOutcome {
    NodeSpec want;
    NodeState found;  // what was at the path when the plan was made
    ChannelPlan plan;
    Action action = Action::planned;
    std::string error;     // for Action::error: the failed call and why ("mknodat: Operation not permitted")
    int error_number = 0;  // for Action::error: the errno
};

// What is at `name` in the folder `dir_fd`, not following links; `error` is the errno of a failed look
// (0 when it worked; a missing node is not an error).
struct Observation {
    NodeState state;
    int error = 0;
};
Observation observe_node(int dir_fd, const std::string& name);

// Plans one channel and changes nothing (checking, dry-running): planned, unchanged or refused. A
// dir_fd of -1 stands for a channel folder that does not exist yet.
// Its plan's detail names settings through setting_name.
ChannelOutcome preview_channel(int dir_fd, const NodeSpec& want, const PlanOptions& options);

// Brings one channel to what was asked: looks, plans and changes; when another process changes the node
// between the look and the change (EEXIST on create, ENOENT on a fix or removal), looks again.
ChannelOutcome apply_channel(int dir_fd, const NodeSpec& want, const PlanOptions& options);

// The process that made the hidden temporary node `name` (".channel7.cumemctl-PID-SEQ-RANDOM", the
// name apply_channel gives a node between its mknodat and its rename), or nullopt for any other name.
std::optional<pid_t> temporary_owner(std::string_view name);

// Removes the hidden temporary nodes in `dir_fd` whose run has gone (a crash or SIGKILL between the
// mknodat and the rename leaves one): character devices only, never one of a process that still
// lives. Returns the names removed.
std::vector<std::string> remove_stale_temporaries(int dir_fd);

}  // namespace cumemctl::imex
