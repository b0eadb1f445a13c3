// The memory options that granularity, create and create --pool share, registered in one place.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "gpu/memory_props.hpp"

namespace cumemctl::cmd {

// The options as typed; to_request() parses them (usage errors are thrown then, inside the report).
struct MemoryOptions {
    std::string location = "device";
    std::string handle_type = "none";
    bool compression = false;
    bool rdma = false;
    bool tile_pool = false;

    MemoryRequest to_request() const {
        MemoryRequest r;
        r.location = parse_location(location);
        r.handle_type = parse_handle_type(handle_type);
        r.compression = compression;
        r.rdma = rdma;
        r.tile_pool = tile_pool;
        return r;
    }
};

// Adds --location and --handle-type to a subcommand (what pools take of the memory options).
inline void add_location_options(CLI::App& app, MemoryOptions& o) {
    app.add_option("--location", o.location, "device, host, host-numa or host-numa:N")->capture_default_str();
    app.add_option("--handle-type", o.handle_type, "none, posix-fd or fabric")->capture_default_str();
}

// Adds --location, --handle-type, --compression, --rdma and --tile-pool to a subcommand.
inline void add_memory_options(CLI::App& app, MemoryOptions& o) {
    add_location_options(app, o);
    app.add_flag("--compression", o.compression, "ask for generic compression");
    app.add_flag("--rdma", o.rdma, "ask for GPUDirect RDMA capability");
    app.add_flag("--tile-pool", o.tile_pool, "ask for tile-pool usage (CU_MEM_CREATE_USAGE_TILE_POOL)");
}

}  // namespace cumemctl::cmd
