#include "gpu/pool/pool_create.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "cuda/driver_call.hpp"
#include "gpu/diagnosis/imex_channel_access.hpp"
#include "gpu/pool/pool_access.hpp"
#include "gpu/device/peer_access.hpp"
#include "gpu/verify/verify.hpp"
#include "gpu/pool/pool_workload.hpp"
#include "gpu/device/primary_context.hpp"
#include "gpu/verify/verify_module.hpp"
#include "util/size.hpp"
#include "util/stopwatch.hpp"
#include "gpu/device/locality.hpp"

namespace cumemctl::gpu {
namespace {

// Refuses an IPC check of a fabric pool before the driver is asked when this process can open no IMEX
// channel. The driver would refuse the export (CUDA_ERROR_NOT_PERMITTED), but on the H200's 580.159.04
// driver the next cuStreamSynchronize after that refused export crashed the process (SIGSEGV inside
// libcuda, docs/hardware/2026-11-29-run2.md), so the tool does not walk into it.
void require_imex_channel(const std::string& dir) {
    const ImexChannelAccess access = read_channel_access(dir);
    if (!access.accessible.empty()) return;
    Problem p;
    p.exit_code = ExitCode::permission;
    p.message = "a fabric pool cannot be exported: this process can open no IMEX channel";
    p.cause = fmt::format(
        "exporting fabric handles needs an IMEX channel node that this process can open: {}; "
        "checked before calling the driver, whose refused export crashed the process on "
        "driver 580.159.04",
        access.describe());
    p.remedy = access.remedy();
    throw Error(std::move(p));
}

// The pool's own device, or -1 for a host pool.
int pool_owner(const CUmemLocation& location, int device) {
    return is_device_memory(location) ? device : -1;
}

// Grants the listed devices read-write access to the pool (its own device has it already; a host
// pool's devices all need it) and reads every listed device's access back.
std::string grant_pool_access(const DriverApi& api, CUmemoryPool pool, int device, int owner,
                              const std::vector<int>& access, CreatePoolResult& r) {
    const std::vector<int> devices = access_devices(device, access);
    std::vector<int> granted;
    for (int d : devices) {
        if (d != owner) granted.push_back(d);
    }
    if (!granted.empty()) {
        const std::vector<CUmemAccessDesc> descs = read_write_descs(granted);
        CU_CALL(api, cuMemPoolSetAccess, pool, descs.data(), descs.size());
    }
    r.access = pool_device_access(api, pool, owner, devices);
    return granted.empty() ? fmt::format("device {} owns the pool; nothing to grant", owner)
                           : fmt::format("cuMemPoolSetAccess read-write for device {}", fmt::join(granted, ", "));
}

// Fills the block from `device` and checks it from each other listed device, one step each.
void check_block_access(const DriverApi& api, CUdeviceptr block, int device, const std::vector<int>& access,
                        CreatePoolResult& r) {
    const std::uint64_t seed = random_pattern_seed();
    if (!r.outcome.attempt("fill", [&] {
            const VerifyResult v = fill_pattern(api, block, r.size, seed);
            return fmt::format("device {}: {:.1f} GB/s", device, v.fill_gbps);
        })) {
        return;
    }
    for (int d : access_devices(device, access)) {
        if (d == device) continue;
        const std::string step = fmt::format("check from device {}", d);
        if (!r.outcome.attempt(step, [&] {
                const VerifyResult v = check_from_device(api, d, block, r.size, seed);
                r.checks.push_back({d, v});
                if (!v.ok()) throw pattern_mismatch(fmt::format("the check from device {}", d), v);
                return fmt::format("{} mismatching words, {:.1f} GB/s", v.mismatches, v.check_gbps);
            })) {
            return;
        }
    }
}

// The steps, from creating the pool to destroying it; whatever they made is gone when this returns.
void create_allocate_share(const DriverApi& api, int device, const PoolRequest& request, const CUmemLocation& location,
                           std::optional<IpcRequest>& ipc, const std::vector<int>& access, CreatePoolResult& r) {
    const std::uint64_t size = r.size;
    Stopwatch watch;
    OwnedPool pool(api, device, request);
    r.pool = pool.info();
    r.outcome.note("create pool", watch.seconds(),
                   fmt::format("cuMemPoolCreate at {}, handle types {}, max size {}", pool_location_name(location),
                               handle_type_name(request.handle_type),
                               request.max_size == 0 ? "driver default" : format_size(request.max_size)));
    if (!access.empty() && !r.outcome.attempt("set access", [&] {
            return grant_pool_access(api, pool.handle(), device, pool_owner(location, device), access, r);
        })) {
        return;
    }
    const Stream stream(api);
    std::optional<PoolAllocation> block;
    if (!r.outcome.attempt("allocate", [&] {
            block.emplace(api, pool.handle(), size, stream);
            r.after_alloc = read_pool_attributes(api, pool.handle());
            return fmt::format("{} from the pool ({} reserved)", format_size(size),
                               format_size(r.after_alloc->reserved_current));
        })) {
        return;
    }
    if (request.location.domain) {
        r.outcome.attempt("placement", [&] {
            const int domains = device_attribute(api, device, locality::kAttrDomainCount).value_or(1);
            r.pool_placement = pool_placement(api, pool.handle(), *request.location.domain, domains);
            r.block_placement = pointer_placement(api, block->get(), *request.location.domain, domains);
            r.pool_location = gpu::pool_location(api, pool.handle());
            return fmt::format("pool: {}; block: {}", placement_text(*r.pool_placement),
                               placement_text(*r.block_placement));
        });
    }
    if (!access.empty()) check_block_access(api, block->get(), device, access, r);
    if (ipc && r.outcome.passed()) {
        r.ipc_checked = true;
        ipc->device = device;
        ipc->size = size;
        ipc->handle_type = request.handle_type;
        run_pool_ipc_check(api, pool.handle(), block->get(), *ipc, r.outcome);
    }
    if (r.outcome.attempt("free", [&] {
            block->free();
            r.after_free = read_pool_attributes(api, pool.handle());
            const bool importer_freed = std::any_of(
                r.outcome.steps().begin(), r.outcome.steps().end(),
                [](const steps::Step& s) { return s.process == "importer" && s.name == "free import" && s.ok; });
            return std::string(importer_freed ? "cuMemFreeAsync, after the importer freed its import"
                                              : "cuMemFreeAsync");
        })) {
        r.outcome.attempt("destroy pool", [&] {
            pool.destroy();
            return std::string("cuMemPoolDestroy");
        });
    }
}

}  // namespace

CreatePoolResult create_pool_and_check(const DriverApi& api, int device, const PoolRequest& request, std::uint64_t size,
                                       std::optional<IpcRequest> ipc, const std::vector<int>& access) {
    CreatePoolResult r;
    r.size = size;
    const CUmemLocation location = resolve_location(api, request.location, device);
    require_room(api, fmt::format("a block of {}", format_size(size)), round_up(size, pool_granule(api, location)),
                 location, request.max_size);
    if (ipc && request.handle_type == CU_MEM_HANDLE_TYPE_FABRIC) {
        check_pool_support(api, device, location, request.handle_type);
        require_imex_channel(ipc->imex_channel_dir);
    }
    if (!access.empty()) require_peer_access(api, pool_owner(location, device), access);
    r.before = take_snapshot(api);
    create_allocate_share(api, device, request, location, ipc, access, r);
    // The verify kernels stay loaded in the context until unloaded: unload them first, so that the
    // second snapshot compares like with like.
    try {
        unload_verify_kernels(api);
        r.after = take_snapshot(api);
    } catch (const Error& e) {
        r.outcome.keep_problem(e.problem());
    }
    return r;
}

}  // namespace cumemctl::gpu
