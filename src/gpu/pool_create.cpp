#include "gpu/pool_create.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "cuda/driver_call.hpp"
#include "gpu/pool_workload.hpp"
#include "gpu/primary_context.hpp"
#include "util/size.hpp"
#include "util/stopwatch.hpp"

namespace cumemctl {
CreatePoolResult create_pool_and_check(const DriverApi& api, int device, const PoolRequest& request, std::uint64_t size,
                                       std::optional<IpcRequest> ipc) {
    CreatePoolResult r;
    r.size = size;
    const CUmemLocation location = resolve_location(api, request.location, device);
    require_room(api, fmt::format("a block of {}", format_size(size)), round_up(size, pool_granule(api, location)),
                 location, request.max_size);
    const char* me = "exporter";
    Stopwatch watch;
    OwnedPool pool(api, device, request);
    r.pool = pool.info();
    r.outcome.steps.push_back({me, "create pool", true,
                               fmt::format("cuMemPoolCreate at {}, handle types {}, max size {}",
                                           pool_location_name(location), handle_type_name(request.handle_type),
                                           request.max_size == 0 ? "driver default" : format_size(request.max_size)),
                               watch.seconds()});
    const Stream stream(api);
    std::optional<PoolAllocation> block;
    if (!r.outcome.run(me, "allocate", [&] {
            block.emplace(api, pool.handle(), size, stream);
            r.after_alloc = read_pool_attributes(api, pool.handle());
            return fmt::format("{} from the pool ({} reserved)", format_size(size),
                               format_size(r.after_alloc->reserved_current));
        })) {
        return r;
    }
    if (ipc) {
        r.ipc_checked = true;
        ipc->device = device;
        ipc->size = size;
        ipc->handle_type = request.handle_type;
        run_pool_ipc_check(api, pool.handle(), block->get(), *ipc, r.outcome);
    }
    if (r.outcome.run(me, "free", [&] {
            block->free();
            r.after_free = read_pool_attributes(api, pool.handle());
            const bool importer_freed = std::any_of(
                r.outcome.steps.begin(), r.outcome.steps.end(),
                [](const IpcStep& s) { return s.process == "importer" && s.step == "free import" && s.ok; });
            return std::string(importer_freed ? "cuMemFreeAsync, after the importer freed its import"
                                              : "cuMemFreeAsync");
        })) {
        r.outcome.run(me, "destroy pool", [&] {
            pool.destroy();
            return std::string("cuMemPoolDestroy");
        });
    }
    return r;
}

}  // namespace cumemctl
