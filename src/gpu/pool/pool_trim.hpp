// Trimming a pool: run a workload with a release threshold that keeps everything reserved,
// synchronise, cuMemPoolTrimTo(keep), and check that the pool gave its memory back to the device. The
// verdict rests on the pool's own reserved memory; the device's free memory is shown, never judged.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "cuda/driver_api.hpp"
#include "gpu/pool/pool_workload.hpp"

namespace cumemctl::gpu {

// The figures of a trim, in bytes: the pool's (judged) and the device's (device-wide, shown only).
struct TrimFigures {
    std::uint64_t keep = 0;              // cuMemPoolTrimTo's minBytesToKeep
    std::uint64_t granule = 0;           // the location's allocation granularity: the tolerance
    std::uint64_t reserved_before = 0;   // the pool after the workload, before trimming
    std::uint64_t reserved_after = 0;    // the pool after trimming
    std::uint64_t free_at_start = 0;     // the device before the workload
    std::uint64_t free_before_trim = 0;  // the device after the workload (memory still reserved)
    std::uint64_t free_after_trim = 0;   // the device after trimming
};

// The figures as JSON: keep_bytes, granule_bytes, reserved_{before,after}_bytes,
// device_free_{at_start,before_trim,after_trim}_bytes and device_free_scope (their label).
nlohmann::json to_json(const TrimFigures& f);

// The check's answer: whether the memory came back, and why (one sentence either way).
struct TrimVerdict {
    bool returned = false;
    std::string reason;
};

// Passes when the pool's reserved memory after the trim (CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) is at most
// `keep`, within one granule. Device free memory plays no part: other processes move it.
TrimVerdict judge_trim(const TrimFigures& f);

// Throws Error (usage) when `keep` is above what the pool has reserved, with both numbers, naming the
// size to keep and the workload through setting_name.
void require_keep_within(std::uint64_t keep, std::uint64_t reserved);

// What `trim` did: the workload (threshold UINT64_MAX), the figures, how long cuMemPoolTrimTo took,
// and the verdict.
struct TrimResult {
    WorkloadResult workload;
    TrimFigures figures;
    double trim_seconds = 0;
    TrimVerdict verdict;
};

// Runs the trim on a device pool with the current context on its device. The pool's release
// threshold is restored, and anything still reserved beyond what it held at the start is trimmed,
// on every path (errors included).
TrimResult run_trim(const DriverApi& api, CUmemoryPool pool, const WorkloadPattern& pattern, std::uint64_t keep,
                    std::uint64_t granule);

}  // namespace cumemctl::gpu
