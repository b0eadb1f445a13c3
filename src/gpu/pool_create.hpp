// `create --pool` in the core: make a pool with cuMemPoolCreate, allocate a block from it, read it,
// optionally share it with a second process (pool_ipc), then free and destroy, every step recorded.
#pragma once

#include <cstdint>
#include <optional>

#include "gpu/pool_access.hpp"
#include "gpu/pool_attributes.hpp"
#include "gpu/pool_ipc.hpp"

namespace cumemctl {

// What create --pool did on one device.
struct CreatePoolResult {
    PoolInfo pool;                              // as created (the handle is gone afterwards)
    std::uint64_t size = 0;                     // the block allocated from it
    std::optional<PoolAttributes> after_alloc;  // the pool with the block allocated
    std::optional<PoolAttributes> after_free;   // and after it was freed
    bool ipc_checked = false;
    IpcOutcome outcome;  // every step, and the problem that stopped them
};

// On `device`, with its primary context current: refuses (usage error, before anything is made) a
// block larger than the device's free memory or the pool's maximum size; then creates the pool,
// allocates `size` bytes, runs the IPC check when `ipc` is given (its device, size and handle type are
// filled in here), frees and destroys. Errors before the pool exists are thrown (a location or
// handle type the device lacks: unavailable); later ones end the steps and are in outcome.problem.
CreatePoolResult create_pool_and_check(const DriverApi& api, int device, const PoolRequest& request, std::uint64_t size,
                                       std::optional<IpcRequest> ipc);

}  // namespace cumemctl
