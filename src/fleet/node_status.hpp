// A node's status in a fleet summary: its doctor run's status, or what fleet itself found of the node
// (no doctor report, a report that was not ok, no report at all, a report too old), in one order.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

#include "doctor/check.hpp"

namespace cumemctl::fleet {

// Mildest first; a status's severity is its place. doctor's statuses keep status_severity's order
// (pass, warn, busy, timeout, fail); fleet's own sit among them: unknown (no doctor report: it says
// nothing, as a skip) below pass, and stale, missing and error (no verdict to trust) above busy and
// below timeout. doctor's run status is never skip, so skip has no place of its own.
enum class NodeStatus { unknown, pass, warn, busy, stale, missing, error, timeout, fail };
inline constexpr std::size_t kNodeStatusCount = 9;

// "unknown", "pass", "warn", "busy", "stale", "missing", "error", "timeout", "fail".
std::string_view node_status_name(NodeStatus status);
// How bad a node's status is: its place in NodeStatus, 0 (unknown) to 8 (fail).
int node_severity(NodeStatus status);
// Every node status, worst first.
const std::array<NodeStatus, kNodeStatusCount>& node_statuses_worst_first();
// A doctor run's status as a node's (skip, which a run never has, as unknown).
NodeStatus node_status(doctor::CheckStatus status);
// A doctor report's "status" read back, parsed once: a status doctor writes, else unknown.
NodeStatus parse_node_status(std::string_view text);
// Whether a node with this status fails the fleet: stale and worse (stale, missing, error, timeout,
// fail); busy, warn, unknown and pass do not.
bool node_fails(NodeStatus status);

}  // namespace cumemctl::fleet
