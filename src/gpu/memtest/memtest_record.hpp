// The state file of `memtest --record`: one entry per GPU (by UUID) saying when its last memtest ran
// and what it found, so that doctor's memory-health check can say so without testing anything. One
// path, $CUMEMCTL_STATE_DIR/memtest.json (default /var/lib/cumemctl/memtest.json), written atomically.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cumemctl::gpu::memtest {

// The folder when CUMEMCTL_STATE_DIR is not set.
inline constexpr const char* kDefaultStateDir = "/var/lib/cumemctl";

// The state file's path.
std::string memtest_state_path();

// One GPU's last memtest.
struct MemtestRecord {
    std::string uuid;
    std::string host;
    std::string finished;  // UTC, RFC 3339
    double finished_unix = 0;
    std::string status;  // pass, warn, fail; "stopped" when a signal ended it
    std::vector<std::string> reasons;
    std::uint64_t bytes_tested = 0;
    std::uint64_t free_at_start = 0;
    std::uint64_t mismatches = 0;
    std::vector<std::string> patterns_run;
    std::uint64_t seed = 0;
};

nlohmann::json to_json(const MemtestRecord& record);

// One line for doctor: "last memtest 2026-12-01T08:00:00Z: pass, every word held what was written (141 GiB
// tested, 99.82% of the free memory)".
std::string describe(const MemtestRecord& record);

// Writes `records` into the state file at `path`, keeping the other GPUs' entries. Throws Error naming
// the path when it cannot be written, or (judged as root) when others could have changed the file whose
// entries it keeps (permission, exit 4).
void save_memtest_records(const std::string& path, const std::vector<MemtestRecord>& records);

// Throws save_memtest_records's refusal of the file it would keep entries of, before a run that records.
void check_memtest_state(const std::string& path);

// The last memtest of the GPU `uuid` in the state file at `path`; nullopt, with `why`, when the file is
// absent, unreadable, refused (judged as root, one that others could have changed) or holds no entry
// for it. Never throws.
std::optional<MemtestRecord> load_memtest_record(const std::string& path, const std::string& uuid, std::string* why);

}  // namespace cumemctl::gpu::memtest
