// `create`'s core: one allocation through the virtual memory management path (cuMemCreate), with
// what the driver granted, and optionally mapped, verified on the device, exported and checked from
// a second process; every step timed, every resource released on every path.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cuda/driver_api.hpp"
#include "gpu/device/granularity.hpp"
#include "gpu/diagnosis/imex_channel_access.hpp"
#include "gpu/device/devices.hpp"
#include "gpu/device/locality.hpp"
#include "gpu/vmm/dma_buf.hpp"
#include "gpu/vmm/import_check.hpp"
#include "gpu/device/memory_props.hpp"
#include "gpu/device/peer_access.hpp"
#include "gpu/vmm/resource_snapshot.hpp"
#include "gpu/verify/locality_read.hpp"
#include "gpu/verify/verify.hpp"
#include "ipc/timeout.hpp"
#include "steps/step.hpp"

namespace cumemctl::gpu {

// What create is asked to do. The command makes the implications hold: verify and import_check
// imply map, import_check implies export_handle.
struct CreateRequest {
    int device = 0;
    MemoryRequest memory;
    std::uint64_t size = 0;      // as asked, above 0
    bool round_up = false;       // round a size that is not a multiple of the granularity up
    bool map = false;            // reserve, map and grant the device read-write access
    std::vector<int> access;     // --access: more devices granted read-write access (needs map;
                                 // existing; peer access to device memory checked first)
    bool verify = false;         // fill and check the pattern on the device
    bool export_handle = false;  // export the shareable handle
    bool import_check = false;   // a second process imports, maps and checks the pattern
    bool dma_buf = false;        // export the mapped range as a dma-buf, say what the kernel says of it, close it
                                 // (needs map; the device's support checked before anything is made)
    std::string proc = "/proc";  // where the kernel says what a descriptor is (a test's system root moves it)
    std::string imex_channel_dir = imex::kImexChannelDir;
    std::string executable;               // the binary the import check starts
    std::string libcuda;                  // the driver library the import check loads
    ipc::Timeout import_timeout{120000};  // how long to wait for the import check's answer
    // The import check's second process where it was started ahead (start_create_importer), taken by
    // the import check; else the import check starts one. With keep_importer it is given back there
    // afterwards, still serving (gpu/importer: the device's next IPC check uses it), else ended.
    std::optional<ipc::Child>* importer = nullptr;
    bool keep_importer = false;
};

// The exported handle as reported: the descriptor number (valid until create returns) or the
// fabric handle in hex.
struct ExportInfo {
    CUmemAllocationHandleType type = CU_MEM_HANDLE_TYPE_NONE;
    int fd = -1;
    std::string fabric_hex;
};

// What create did; filled as it goes, so that after a failure it still holds every step before it.
struct CreateResult {
    std::uint64_t requested_size = 0;
    std::uint64_t size = 0;  // what was asked of cuMemCreate
    std::optional<Granularity> granularity;
    std::optional<CUmemAllocationProp> requested;
    std::optional<CUmemAllocationProp> granted;  // cuMemGetAllocationPropertiesFromHandle
    std::vector<steps::Step> steps;
    std::optional<CUdeviceptr> address;    // where it was mapped
    std::uint64_t seed = 0;                // of the pattern
    std::vector<DeviceAccess> access;      // each device's access, read back after the grant (--access)
    std::optional<VerifyResult> verify;    // fill and check (--verify)
    std::vector<DeviceCheck> peer_checks;  // the pattern checked from each other --access device
    std::optional<VerifyResult> fill;      // the fill alone (--import-check without --verify)
    std::optional<ExportInfo> exported;
    std::optional<DmaBufExport> dma_buf;  // the mapped range as a dma-buf (closed since)
    std::optional<ImportCheckResult> import_check;
    std::optional<ResourceSnapshot> before;     // taken in the context, before anything was made
    std::optional<ResourceSnapshot> after;      // taken in the context, after everything was released
    int domains = 0;                            // the device's locality domains, where a domain was asked
    std::optional<Placement> placement;         // where the driver says the mapped memory is (a domain asked)
    std::optional<LocalityReads> domain_reads;  // --verify at a domain: the check from each domain's SMs
};

// Runs create in the device's primary context. Throws Error (diagnosed) for the first failure, after
// releasing everything; `result` then holds the steps so far and, where they could be taken, both
// snapshots. A size that is not a multiple of the granularity is refused before cuMemCreate (usage)
// unless round_up. With `access`, a device that cannot reach the owning device's memory as a peer is
// refused before the context is made (unavailable).
void run_create(const DriverApi& api, const CreateRequest& request, CreateResult& result);

// The import check's second process of `request` (an importer, gpu/importer), started ahead of the
// allocation (for request.importer): it initialises the driver and retains the device's context
// meanwhile. Throws Error (failed) when it cannot start.
ipc::Child start_create_importer(const DriverApi& api, const CreateRequest& request);
// The same before cuInit, with the device as the child will see it (`view`, e.g. CUDA_VISIBLE_DEVICES
// set to a UUID that NVML listed).
ipc::Child start_create_importer(const CreateRequest& request, const ChildDeviceView& view);

}  // namespace cumemctl::gpu
