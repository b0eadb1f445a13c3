#include "fleet/node_status.hpp"

namespace cumemctl::fleet {

std::string_view node_status_name(NodeStatus status) {
    switch (status) {
        case NodeStatus::unknown:
            return "unknown";
        case NodeStatus::stale:
            return "stale";
        case NodeStatus::missing:
            return "missing";
        case NodeStatus::error:
            return "error";
        case NodeStatus::pass:
            return doctor::status_name(doctor::CheckStatus::pass);
        case NodeStatus::warn:
            return doctor::status_name(doctor::CheckStatus::warn);
        case NodeStatus::busy:
            return doctor::status_name(doctor::CheckStatus::busy);
        case NodeStatus::timeout:
            return doctor::status_name(doctor::CheckStatus::timeout);
        case NodeStatus::fail:
            break;
    }
    return doctor::status_name(doctor::CheckStatus::fail);
}

int node_severity(NodeStatus status) {
    return static_cast<int>(status);
}

const std::array<NodeStatus, kNodeStatusCount>& node_statuses_worst_first() {
    static const std::array<NodeStatus, kNodeStatusCount> worst_first = [] {
        std::array<NodeStatus, kNodeStatusCount> out{};
        for (std::size_t i = 0; i < kNodeStatusCount; ++i) out[i] = static_cast<NodeStatus>(kNodeStatusCount - 1 - i);
        return out;
    }();
    return worst_first;
}

NodeStatus node_status(doctor::CheckStatus status) {
    switch (status) {
        case doctor::CheckStatus::pass:
            return NodeStatus::pass;
        case doctor::CheckStatus::warn:
            return NodeStatus::warn;
        case doctor::CheckStatus::busy:
            return NodeStatus::busy;
        case doctor::CheckStatus::timeout:
            return NodeStatus::timeout;
        case doctor::CheckStatus::fail:
            return NodeStatus::fail;
        case doctor::CheckStatus::skip:
            break;
    }
    return NodeStatus::unknown;
}

NodeStatus parse_node_status(std::string_view text) {
    const auto status = doctor::parse_status(text);
    return status ? node_status(*status) : NodeStatus::unknown;
}

bool node_fails(NodeStatus status) {
    return node_severity(status) >= node_severity(NodeStatus::stale);
}

}  // namespace cumemctl::fleet
