// The memory options that granularity, create and create --pool share, registered in one place.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "gpu/device/granularity.hpp"
#include "gpu/device/memory_props.hpp"

namespace cumemctl::cmd {

// The options as typed; to_request() parses them (usage errors are thrown then, inside the report).
struct MemoryOptions {
    std::string location = "device";
    std::string handle_type = "none";
    bool compression = false;
    bool rdma = false;
    bool tile_pool = false;
    bool rdma_over_pcie = false;

    gpu::MemoryRequest to_request() const {
        gpu::MemoryRequest r;
        r.location = gpu::parse_location(location);
        r.handle_type = gpu::parse_handle_type(handle_type);
        r.compression = compression;
        r.rdma = rdma;
        r.tile_pool = tile_pool;
        r.rdma_over_pcie = rdma_over_pcie;
        return r;
    }
};

// Adds --location and --handle-type to a subcommand (what pools take of the memory options).
inline void add_location_options(CLI::App& app, MemoryOptions& o) {
    app.add_option("--location", o.location,
                   "device, host, host-numa, host-numa:N, or domain:I (locality domain I of the device; CUDA 13.4)")
        ->capture_default_str();
    app.add_option("--handle-type", o.handle_type, "none, posix-fd or fabric")->capture_default_str();
}

// Adds --location, --handle-type, --compression, --rdma and --tile-pool to a subcommand.
inline void add_memory_options(CLI::App& app, MemoryOptions& o) {
    add_location_options(app, o);
    app.add_flag("--compression", o.compression, "ask for generic compression");
    app.add_flag("--rdma", o.rdma, "ask for GPUDirect RDMA capability");
    app.add_flag("--tile-pool", o.tile_pool, "ask for tile-pool usage (CU_MEM_CREATE_USAGE_TILE_POOL)");
    app.add_flag("--rdma-over-pcie", o.rdma_over_pcie,
                 "ask for GPUDirect RDMA over PCIe (CU_MEM_CREATE_USAGE_GPU_DIRECT_RDMA_OVER_PCIE, CUDA 13.4): what "
                 "--rdma on a locality domain needs where the device's RDMA does not work with localized memory");
}

// granularity's form of the same options: lists that narrow a table. Locations and handle types are
// comma-separated lists (default all); the flags given together form one flag set, and without any
// the table shows no flag and each flag alone.
struct MemoryFilters {
    std::string locations = "all";
    std::string handle_types = "all";
    bool compression = false;
    bool rdma = false;
    bool tile_pool = false;

    gpu::GranularitySelection to_selection() const {
        gpu::GranularitySelection s;
        s.locations = gpu::parse_location_list(locations);
        s.handle_types = gpu::parse_handle_type_list(handle_types);
        if (compression || rdma || tile_pool) {
            gpu::MemoryRequest flags;
            flags.compression = compression;
            flags.rdma = rdma;
            flags.tile_pool = tile_pool;
            s.flag_sets = {flags};
        } else {
            s.flag_sets = gpu::single_flag_sets();
        }
        return s;
    }
};

// Adds the filter form of --location, --handle-type, --compression, --rdma and --tile-pool.
inline void add_memory_filters(CLI::App& app, MemoryFilters& f) {
    app.add_option("--location", f.locations,
                   "locations: device, host, host-numa, host-numa:N, domain:I (CUDA 13.4), a list, or all")
        ->capture_default_str();
    app.add_option("--handle-type", f.handle_types, "handle types: none, posix-fd, fabric, a list, or all")
        ->capture_default_str();
    app.add_flag("--compression", f.compression, "only rows with generic compression");
    app.add_flag("--rdma", f.rdma, "only rows with GPUDirect RDMA capability");
    app.add_flag("--tile-pool", f.tile_pool, "only rows with tile-pool usage");
}

}  // namespace cumemctl::cmd
