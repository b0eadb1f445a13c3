// `create --pool` in the core: make a pool with cuMemPoolCreate, allocate a block from it, read it,
// optionally share it with a second process (pool_ipc), then free and destroy, every step recorded.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "gpu/device/peer_access.hpp"
#include "gpu/pool/pool_access.hpp"
#include "gpu/pool/pool_attributes.hpp"
#include "gpu/pool/pool_ipc.hpp"
#include "gpu/vmm/resource_snapshot.hpp"
#include "gpu/device/locality.hpp"

namespace cumemctl::gpu {

// What create --pool did on one device.
struct CreatePoolResult {
    PoolInfo pool;                              // as created (the handle is gone afterwards)
    std::uint64_t size = 0;                     // the block allocated from it
    std::optional<PoolAttributes> after_alloc;  // the pool with the block allocated
    std::optional<PoolAttributes> after_free;   // and after it was freed
    std::vector<DeviceAccess> access;           // each --access device's access to the pool, read back
    std::vector<DeviceCheck> checks;            // the block's pattern checked from each other --access device
    bool ipc_checked = false;
    StepLog outcome{{}, "exporter"};         // every step, and the problem that stopped them
    std::optional<ResourceSnapshot> before;  // free memory and descriptors before anything was made
    std::optional<ResourceSnapshot> after;   // and after everything was released (not after a throw)
    // A pool at a locality domain: where the driver says the pool and the block are.
    std::optional<Placement> pool_placement;
    std::optional<Placement> block_placement;
    std::optional<CUmemLocation> pool_location;  // the pool's location as the driver reads it back (13.2+)
};

// On `device`, with its primary context current: refuses (usage error, before anything is made) a
// block larger than the device's free memory or the pool's maximum size; then creates the pool,
// allocates `size` bytes, runs the IPC check when `ipc` is given (its device, size and handle type are
// filled in here), frees and destroys, with free memory and descriptors read before and after. With
// `access` (create --pool --access: existing devices), first refuses (unavailable) a device that cannot
// reach the pool's device as a peer, grants each listed device read-write access to the new pool
// (cuMemPoolSetAccess), reads it back, and after allocating fills the block from `device` and checks it
// from each other listed device. Errors before the pool exists are thrown (a location or handle type the
// device lacks: unavailable); later ones end the steps and are in outcome.problem.
CreatePoolResult create_pool_and_check(const DriverApi& api, int device, const PoolRequest& request, std::uint64_t size,
                                       std::optional<IpcRequest> ipc, const std::vector<int>& access = {});

}  // namespace cumemctl::gpu
