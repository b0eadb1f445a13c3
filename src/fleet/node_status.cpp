#include "fleet/node_status.hpp"

#include <optional>

#include "base/enum_words.hpp"

namespace cumemctl::fleet {

namespace {

// What fleet itself found of a node; the other statuses are doctor's and read as doctor words them.
constexpr auto kOwnStatusWords = enum_words<NodeStatus>({{NodeStatus::unknown, "unknown"},
                                                         {NodeStatus::stale, "stale"},
                                                         {NodeStatus::missing, "missing"},
                                                         {NodeStatus::error, "error"}},
                                                        "unknown");

}  // namespace

std::string_view node_status_name(NodeStatus status) {
    if (const std::optional<std::string_view> own = kOwnStatusWords.find(status)) return *own;
    for (const doctor::CheckStatus check : doctor::statuses_worst_first()) {
        if (node_status(check) == status) return doctor::status_name(check);
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
