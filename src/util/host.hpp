// Which node a report comes from and when: the host name and UTC timestamps, for fleet summaries.
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace cumemctl {

// The node's name: $CUMEMCTL_HOST when set and not empty (in Kubernetes, the node name from the
// downward API), else gethostname(); "unknown" where neither gives one.
std::string host_name();

// A UTC time as RFC 3339 with whole seconds: "2026-11-29T12:34:56Z".
std::string utc_timestamp(std::chrono::system_clock::time_point when);

// utc_timestamp's text read back ("2026-11-29T12:34:56Z"); nullopt for any other text.
std::optional<std::chrono::system_clock::time_point> parse_utc_timestamp(const std::string& text);

// Seconds since the Unix epoch, with fractions (Prometheus timestamps gauges).
double unix_seconds(std::chrono::system_clock::time_point when);

}  // namespace cumemctl
