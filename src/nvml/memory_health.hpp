// What NVML knows of one device's memory: the figures (no CUDA context needed) and its health (ECC,
// remapped rows), with the reason for each figure NVML could not give; and the verdict an operator acts
// on.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/verdict.hpp"
#include "nvml/nvml.hpp"

namespace cumemctl::nvml {

// nvmlDeviceGetRemappedRows: rows remapped for correctable and uncorrectable errors, a remap waiting
// for the next GPU reset, and a remap that could not be made.
struct RemappedRows {
    unsigned corrected = 0;
    unsigned uncorrected = 0;
    bool pending = false;
    bool failure = false;
};

// nvmlDeviceGetRetiredPages: pages retired for multiple single-bit and for double-bit ECC errors, and
// a retirement waiting for the next reset (GPUs before Ampere retire pages; later ones remap rows).
struct RetiredPages {
    unsigned single_bit = 0;
    unsigned double_bit = 0;
    bool pending = false;
};

// One device as NVML sees it. Every figure is optional: absent where NVML did not answer, with the
// reason in `unavailable` (field name -> NVML's answer).
struct MemoryHealth {
    // The v2 view (cuDeviceTotalMem == total - reserved); with only the v1 call, reserved is unknown and
    // total, used include it.
    std::optional<std::uint64_t> total, reserved, free, used;
    bool memory_v2 = false;
    std::optional<std::uint64_t> bar1_total;
    std::optional<bool> ecc_enabled, ecc_pending;
    std::optional<std::uint64_t> ecc_uncorrected_volatile, ecc_uncorrected_aggregate;
    std::optional<std::uint64_t> ecc_corrected_volatile, ecc_corrected_aggregate;
    std::optional<RemappedRows> remapped_rows;
    std::optional<RetiredPages> retired_pages;
    std::optional<bool> persistence_mode;
    std::optional<bool> mig_enabled, mig_pending;
    std::vector<std::pair<std::string, std::string>> unavailable;
};

// Asks NVML everything above for one device; never throws.
MemoryHealth query_memory_health(const Library& nvml, Device device);

// The memory figures alone (total, reserved, free, used: one NVML call), the rest left empty; never
// throws.
MemoryHealth query_memory_figures(const Library& nvml, Device device);

// The device memory that NVML counts for process `pid` (its compute processes); nullopt with `why` when
// NVML does not list the process (a container without the host's PID namespace lists host PIDs) or cannot
// say.
std::optional<std::uint64_t> process_memory(const Library& nvml, Device device, pid_t pid, std::string* why);

// The health verdict: fail on a row-remapping failure or uncorrectable ECC errors since boot (volatile),
// warn on a pending remap; pass otherwise (and where NVML cannot say, the reason).
struct HealthVerdict {
    CheckStatus status = CheckStatus::pass;  // pass, warn or fail
    std::string reason;
};
HealthVerdict judge_memory_health(const MemoryHealth& health);

// {"total_bytes", "reserved_bytes", "free_bytes", "used_bytes", "bar1_total_bytes", "ecc": {...}, "remapped_rows":
// {...},
//  "retired_pages": {...}, "persistence_mode", "mig": {...}, "unavailable": {...}}; a figure NVML did not
//  give is null.
nlohmann::json to_json(const MemoryHealth& health);
// {"corrected", "uncorrected", "pending", "failure"}, or null.
nlohmann::json to_json(const std::optional<RemappedRows>& rows);
// {"single_bit", "double_bit", "pending"}, or null.
nlohmann::json to_json(const std::optional<RetiredPages>& pages);

}  // namespace cumemctl::nvml
