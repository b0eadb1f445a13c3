// The pool options that create --pool, pool-stats and trim share: what a pool takes beyond --location
// and --handle-type, and the pool they ask for, checked before the driver is loaded.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "gpu/pool/pool_access.hpp"
#include "gpu/pool/pool_workload.hpp"
#include "memory_options.hpp"

namespace cumemctl::cmd {

// What a pool takes beyond --location and --handle-type.
struct PoolOptions {
    bool pool = false;           // create --pool: cuMemPoolCreate instead of cuMemCreate
    std::string max_size = "0";  // --max-size: the pool's maximum size (0: the driver's default)
    bool ipc_check = false;      // create --pool --ipc-check
};

// Adds --max-size, the one declaration of it (create --pool, pool-stats, trim).
void add_max_size_option(CLI::App& app, PoolOptions& o);

// Adds what pool-stats and trim take for a new pool: --location, --handle-type and --max-size.
void add_new_pool_options(CLI::App& app, MemoryOptions& memory, PoolOptions& o);

// The pool asked for. Throws usage errors: a bad location, handle type or size, and --compression,
// --rdma or --tile-pool, which cuMemPoolCreate has no field for.
gpu::PoolRequest pool_request(const MemoryOptions& memory, const PoolOptions& o);

// The pool a pool-stats or trim run acts on (--pool default|current|new) with the new pool's request,
// checked: --handle-type and --max-size describe a new pool only.
struct PoolSelection {
    gpu::PoolChoice choice = gpu::PoolChoice::default_pool;
    gpu::PoolRequest request;
};

// Parses --pool and the new-pool options together (usage errors).
PoolSelection pool_selection(const std::string& pool, const MemoryOptions& memory, const PoolOptions& o);

}  // namespace cumemctl::cmd
