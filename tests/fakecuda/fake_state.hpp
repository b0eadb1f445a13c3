// The fake driver's model: devices read from a JSON profile (FAKECUDA_PROFILE), the process's state,
// and error injection. Test equipment only: it answers like a driver so the real seam can be tested.
#pragma once

#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace fake {

// One granularity answer: location type and id, handle types, a CUmemAllocationCompType/usage flag
// index as in the profiles' "granularity" tables (profiles/*.json: 0 none, 1 compression, 2 RDMA,
// 3 tile pool), and the result.
struct GranularityRow {
    int loc = 1;
    int id = 0;
    int handle_types = 0;
    int flag = 0;
    std::uint64_t min = 0;
    std::uint64_t rec = 0;
    CUresult result = CUDA_SUCCESS;
};

// One fake GPU.
struct Device {
    std::string name;
    std::string uuid_hex;  // 32 hex digits
    std::string pci_bus_id;
    std::uint64_t total = 0;
    std::uint64_t used = 0;    // bytes taken by allocations of this process (and by `baseline_used`)
    std::map<int, int> attrs;  // attribute number -> value; absent -> CUDA_ERROR_INVALID_VALUE
    std::vector<GranularityRow> granularity;
    nlohmann::json extra;  // the profile's device object, for feature files (pools, endpoints)
    bool context_retained = false;
    int context_refs = 0;
};

// One injected failure: the call fails with `result` on its nth call (1-based), `count` times
// (0 for ever after).
struct Injection {
    std::string call;
    CUresult result = CUDA_ERROR_UNKNOWN;
    int nth = 1;
    int count = 1;
};

// The whole fake process state, guarded by mutex.
struct State {
    std::mutex mutex;
    int driver_version = 13000;
    CUresult init_error = CUDA_SUCCESS;
    bool initialised = false;
    std::vector<Device> devices;
    std::vector<std::string> missing_entry_points;
    std::vector<Injection> injections;
    std::vector<std::pair<std::string, int>> delays;  // FAKECUDA_DELAY_MS: call, milliseconds
    // FAKECUDA_SYNC_COPIES=1: an asynchronous copy returns once its stream has reached its end, as under
    // a tool that checks each copy as it is queued (compute-sanitizer's initcheck).
    bool sync_copies = false;
    // FAKECUDA_COST_MS: what the real driver's start-up costs, silently (a model of N GPUs, not a
    // signal case): cuInit takes init_base + init_per_device for each visible device; making a primary
    // context takes context, releasing the last reference release; both one at a time on the node
    // where node_lock names a file (every process takes it: the real driver makes and releases the
    // contexts of all processes largely one at a time, bench/contexts.py), else one at a time in a
    // process.
    int init_base_ms = 0;
    int init_per_device_ms = 0;
    int context_ms = 0;
    int release_ms = 0;
    std::string node_lock;
    std::map<std::string, int> call_counts;
    nlohmann::json profile;
};

// The state, loaded from the profile on first use. A profile that cannot be read aborts the process
// with a message: a broken test fixture must not look like a driver answer.
State& state();

// What an injection of "HANG" gives: the call never returns (it sleeps until the process ends).
// (1023: no CUresult, and within the enumeration's range, 0 to 1023, that UBSan checks.)
inline constexpr CUresult kHang = static_cast<CUresult>(1023);

// Parses a CUresult name such as "CUDA_ERROR_OUT_OF_MEMORY", or HANG (kHang); aborts on an unknown name.
CUresult result_from_name(const std::string& name);
// The name and text of a CUresult, nullptr for codes the fake does not know.
const char* result_name(CUresult r);
const char* result_text(CUresult r);

// Counts a call and returns the injected failure for it, if any; an injected HANG never returns. Call at
// the top of every entry point.
// A call named in FAKECUDA_DELAY_MS ("call:ms;call2:ms") first says "fakecuda: delay CALL MS ms (pid
// N)" on stderr and sleeps that long: a slow driver, so that tests can send a signal mid-run.
std::optional<CUresult> injected(const char* call);

// Counts a call by what it asked, as "call:value" (cuDeviceGetAttribute:149, cuMemPoolGetAttribute:15,
// cuMemCreate:6 for its location type), so that FAKECUDA_COUNT_CALLS shows a call that the driver's
// version refuses was not made. Takes the state's lock.
void count_variant(const char* call, long value);

// Sleeps `ms` milliseconds (a FAKECUDA_COST_MS cost); nothing for 0.
void spend(int ms);
// The same for a context's cost, one at a time: on the node (an exclusive lock on the file
// FAKECUDA_COST_MS names) or in this process.
void spend_serialised(int ms);

// The device for an ordinal, or nullptr.
Device* device(int ordinal);
// Whether the device's profile sets an attribute to something other than 0 (false for no such device).
bool has_attr(int ordinal, int attribute);

// What this process still holds, one line for each kind ("2 allocations not released"), for
// FAKECUDA_CHECK_LEAKS=1, the one leak switch: at exit, a process that holds anything says
// "fakecuda: leak: LINE" on stderr for each and exits 70, which fails the case that set it. Each file
// that hands something out lists what of it is left.
std::vector<std::string> pool_leaks();         // fake_pools.cpp: pools, pool allocations, imported pointers
std::vector<std::string> protocol_breaches();  // fake_pools.cpp: exporter frees while an import was live
std::vector<std::string> endpoint_leaks();     // fake_le.cpp: endpoint ids, endpoints, bindings
std::vector<std::string> memory_leaks();       // fake_vmm.cpp: cuMemCreate allocations, reserved ranges
std::vector<std::string> dma_buf_leaks();      // fake_dma_buf.cpp: dma-buf descriptors still open
std::vector<std::string> pinned_host_leaks();  // fake_host.cpp: cuMemHostAlloc memory not freed

// Whether the calling process can open an IMEX channel: some channelN under the channel directory
// (FAKECUDA_IMEX_DIR, or the profile's "imex_channel_dir", default /dev/nvidia-caps-imex-channels)
// is a character device the process may read and write. This is the rule the real driver applies to fabric handles.
bool imex_channel_available();

}  // namespace fake

// Every entry point starts with this: counts the call, applies injection, requires cuInit.
#define FAKE_ENTRY(name)                                      \
    do {                                                      \
        if (auto inj_ = ::fake::injected(name)) return *inj_; \
    } while (0)
#define FAKE_ENTRY_INIT(name)                                                \
    do {                                                                     \
        FAKE_ENTRY(name);                                                    \
        if (!::fake::state().initialised) return CUDA_ERROR_NOT_INITIALIZED; \
    } while (0)
