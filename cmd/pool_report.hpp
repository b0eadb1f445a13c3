// What pool-stats, trim and create --pool share in their reports: pools, attributes and workloads as
// JSON (sizes in bytes) and as table columns (human units), and the per-process label.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpu/pool/pool_access.hpp"
#include "gpu/pool/pool_workload.hpp"
#include "report/report.hpp"

namespace cumemctl::cmd {

// The label every pool report carries: the driver answers for this process's pools only.
inline constexpr const char* kPerProcessNote =
    "pool statistics are per process: these are the pools of this cumemctl process, not of other "
    "processes on the GPU";

// A pool's attributes as JSON: sizes in bytes, policies as booleans.
nlohmann::json attributes_json(const gpu::PoolAttributes& a);

// A pool as JSON: location, allocation type, the entry point that returned it, and handle types and
// maximum size (null where not known: a pool this process did not create).
nlohmann::json pool_info_json(const gpu::PoolInfo& p);

// A workload as JSON: pattern, counts, the four snapshots, times and rates.
nlohmann::json workload_json(const gpu::WorkloadPattern& pattern, const gpu::WorkloadResult& w);

// A table of attributes with one column per named pool.
Table attributes_table(std::string title, const std::vector<std::pair<std::string, gpu::PoolAttributes>>& columns);

// The workload's table: before, after alloc, after free and after sync, with times as notes.
Table workload_table(std::string title, const gpu::WorkloadPattern& pattern, const gpu::WorkloadResult& w);

// Adds a pool's attributes as Prometheus gauges (pool_reserved_bytes, pool_used_bytes, their high-water
// marks, pool_release_threshold_bytes, pool_reuse_policy) with `labels`; the help says they are this
// process's.
void add_attribute_metrics(Metrics& out, const MetricLabels& labels, const gpu::PoolAttributes& a);

// Adds a workload as gauges: reserved and used bytes at each moment (label phase), the seconds of each
// step (label step) and the allocation count.
void add_workload_metrics(Metrics& out, const MetricLabels& labels, const gpu::WorkloadResult& w);

// A pool's handle types and maximum size for table cells ("unknown" where not known).
std::string handle_types_text(const gpu::PoolInfo& p);
std::string max_size_text(const gpu::PoolInfo& p);

// A release threshold for people: human units, or "UINT64_MAX (keep everything)".
std::string threshold_text(std::uint64_t threshold);

}  // namespace cumemctl::cmd
