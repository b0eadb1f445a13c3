// The pool options that create --pool, pool-stats and trim share: see pool_options.hpp.
#include "pool_options.hpp"

#include "util/size.hpp"

namespace cumemctl::cmd {
using namespace gpu;

void add_max_size_option(CLI::App& app, PoolOptions& o) {
    app.add_option("--max-size", o.max_size, "a new pool's maximum size (0: the driver's default)")
        ->capture_default_str();
}

void add_new_pool_options(CLI::App& app, MemoryOptions& memory, PoolOptions& o) {
    add_location_options(app, memory);
    add_max_size_option(app, o);
}

PoolRequest pool_request(const MemoryOptions& memory, const PoolOptions& o) {
    if (memory.compression || memory.rdma || memory.tile_pool) {
        throw Error(ExitCode::usage, "--compression, --rdma and --tile-pool do not apply to pools",
                    "cuMemPoolCreate has no such properties: leave them out, or create without --pool");
    }
    PoolRequest r;
    r.location = parse_location(memory.location);
    r.handle_type = parse_handle_type(memory.handle_type);
    r.max_size = parse_size(o.max_size);
    return r;
}

PoolSelection pool_selection(const std::string& pool, const MemoryOptions& memory, const PoolOptions& o) {
    PoolSelection s;
    s.choice = parse_pool_choice(pool);
    s.request = pool_request(memory, o);
    if (s.choice != PoolChoice::new_pool &&
        (s.request.handle_type != CU_MEM_HANDLE_TYPE_NONE || s.request.max_size != 0)) {
        throw Error(ExitCode::usage, "--handle-type and --max-size describe a new pool", "add --pool new");
    }
    return s;
}

}  // namespace cumemctl::cmd
