// `cumemctl create --pool`: a stream-ordered pool made with cuMemPoolCreate, a block allocated from it,
// and with --ipc-check the pool and block shared with a second process. Also the options that
// pool-stats and trim take for a new pool (--pool new).
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "command.hpp"
#include "gpu/pool_access.hpp"
#include "memory_options.hpp"

namespace cumemctl::cmd {

// What a pool takes beyond --location and --handle-type.
struct PoolOptions {
    bool pool = false;           // create --pool: cuMemPoolCreate instead of cuMemCreate
    std::string max_size = "0";  // --max-size: the pool's maximum size (0: the driver's default)
    bool ipc_check = false;      // create --pool --ipc-check
};

// Adds create's --pool, --max-size and --ipc-check (create itself registers --location and
// --handle-type).
void add_pool_options(CLI::App& app, PoolOptions& o);

// Adds what pool-stats and trim take for a new pool: --location, --handle-type and --max-size.
void add_new_pool_options(CLI::App& app, MemoryOptions& memory, PoolOptions& o);

// The pool asked for. Throws usage errors: a bad location, handle type or size, and --compression,
// --rdma or --tile-pool, which cuMemPoolCreate has no field for.
PoolRequest pool_request(const MemoryOptions& memory, const PoolOptions& o);

// What create --pool takes from create's own options.
struct CreatePoolTarget {
    std::string devices;                         // --device
    std::string size;                            // --size: the block allocated from the pool
    std::string access;                          // --access: devices granted access to the pool
    std::vector<std::string> cumemcreate_flags;  // create's flags given that apply to cuMemCreate only
};

// Throws a usage error when a pool option (--ipc-check, --max-size) is given without --pool.
void require_pool_flag(const PoolOptions& o);

// Runs create --pool: per device, the pool, its block, its attributes and (with --ipc-check) every
// step of the check across two processes.
Report run_create_pool(const PoolOptions& o, const MemoryOptions& memory, const CreatePoolTarget& target,
                       const Globals& globals);

}  // namespace cumemctl::cmd
