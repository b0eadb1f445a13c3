#include "imex/channel_plan.hpp"

#include <fmt/format.h>

#include "util/file_mode.hpp"

namespace cumemctl::imex {
namespace {

bool is_device_node(NodeKind kind) {
    return kind == NodeKind::char_device || kind == NodeKind::block_device;
}

bool right_device(const NodeSpec& want, const NodeState& have) {
    return have.kind == NodeKind::char_device && have.major == want.major && have.minor == want.channel_minor();
}

// "character device 242:3" or "block device 242:0".
std::string describe_device(const NodeState& have) {
    return fmt::format("{} {}", node_kind_name(have.kind), format_device(have.major, have.minor));
}

std::string wrong_device_detail(const NodeSpec& want, const NodeState& have) {
    return fmt::format("{}, not character device {}", describe_device(have),
                       format_device(want.major, want.channel_minor()));
}

ChannelPlan plan_removal(const NodeSpec& want, const NodeState& have, const PlanOptions& options) {
    if (have.kind == NodeKind::missing) return {Change::none, "absent"};
    if (!is_device_node(have.kind)) {
        return {Change::refuse, fmt::format("a {}; only device nodes are ever removed", node_kind_name(have.kind))};
    }
    if (right_device(want, have)) return {Change::remove, describe_device(have)};
    if (options.force) return {Change::remove, wrong_device_detail(want, have)};
    return {Change::refuse, wrong_device_detail(want, have) + "; {force} removes it"};
}

}  // namespace

ChannelPlan plan_channel(const NodeSpec& want, const NodeState& have, const PlanOptions& options) {
    if (options.remove) return plan_removal(want, have, options);
    if (have.kind == NodeKind::missing) return {Change::create, "absent"};
    if (!is_device_node(have.kind)) {
        return {Change::refuse,
                fmt::format("a {}; cumemctl never changes anything but a device node", node_kind_name(have.kind))};
    }
    if (!right_device(want, have)) {
        if (options.force) return {Change::replace, wrong_device_detail(want, have)};
        return {Change::refuse, wrong_device_detail(want, have) + "; {force} replaces it"};
    }
    std::string detail;
    if (have.uid != want.uid || have.gid != want.gid) {
        detail = fmt::format("owner {}:{} -> {}:{}", have.uid, have.gid, want.uid, want.gid);
    }
    if (have.mode != want.mode) {
        if (!detail.empty()) detail += ", ";
        detail += fmt::format("mode {} -> {}", format_mode(have.mode), format_mode(want.mode));
    }
    return {detail.empty() ? Change::none : Change::fix, detail};
}

std::string_view change_name(Change change) {
    switch (change) {
        case Change::none:
            return "none";
        case Change::create:
            return "create";
        case Change::fix:
            return "fix";
        case Change::replace:
            return "replace";
        case Change::remove:
            return "remove";
        case Change::refuse:
            return "refuse";
    }
    return "none";
}

}  // namespace cumemctl::imex
