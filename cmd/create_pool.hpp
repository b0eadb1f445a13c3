// `cumemctl create --pool`: a stream-ordered pool made with cuMemPoolCreate, a block allocated from it,
// and with --ipc-check the pool and block shared with a second process.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "command.hpp"
#include "gpu/device/devices.hpp"
#include "gpu/device/peer_access.hpp"
#include "pool_options.hpp"

namespace cumemctl::cmd {

// Adds create's --pool, --max-size and --ipc-check (create itself registers --location and
// --handle-type).
void add_pool_options(CLI::App& app, PoolOptions& o);

// What create --pool takes from create's own options.
struct CreatePoolTarget {
    std::string devices;                         // --device
    std::string size;                            // --size: the block allocated from the pool
    std::string access;                          // --access: devices granted access to the pool
    std::vector<std::string> cumemcreate_flags;  // create's flags given that apply to cuMemCreate only
};

// Throws a usage error when a pool option (--ipc-check, --max-size) is given without --pool.
void require_pool_flag(const PoolOptions& o);

// create --pool's options checked before the driver is loaded.
struct CreatePoolPlan {
    gpu::PoolRequest request;
    std::uint64_t size = 0;                 // the block
    gpu::DeviceList devices;                // --device
    std::optional<gpu::DeviceList> access;  // --access
};

// create --pool's options as typed: the pool options, the memory options and create's own.
struct CreatePoolCommand {
    PoolOptions options;
    MemoryOptions memory;
    CreatePoolTarget target;

    // Throws usage errors: create's cuMemCreate-only flags, a bad size, location, handle type or device
    // list, and an --ipc-check the pool cannot do.
    CreatePoolPlan check() const;
};

// Runs create --pool: per device, the pool, its block, its attributes and (with --ipc-check) every
// step of the check across two processes.
Report run_create_pool(const CreatePoolCommand& command, const Globals& globals);

}  // namespace cumemctl::cmd
