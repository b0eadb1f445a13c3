#include "gpu/vmm/vmm_create.hpp"

#include <fmt/format.h>

#include "base/setting.hpp"
#include "cuda/driver_call.hpp"
#include "gpu/device/devices.hpp"
#include "gpu/device/locality.hpp"
#include "gpu/device/primary_context.hpp"
#include "gpu/diagnosis/diagnosis.hpp"
#include "gpu/verify/locality_read.hpp"
#include "gpu/verify/verify_module.hpp"
#include "gpu/vmm/device_mapping.hpp"
#include "gpu/vmm/shareable_handle.hpp"
#include "util/size.hpp"
#include "base/scope_exit.hpp"

namespace cumemctl::gpu {
namespace {

// The size to allocate: the one asked when it is a multiple of the granularity, rounded up when
// asked to, else a usage error naming the granularity, the nearest valid sizes and rounding up.
std::uint64_t allocation_size(std::uint64_t size, std::uint64_t granularity, bool round) {
    if (size % granularity == 0) return size;
    if (round) return round_up(size, granularity);
    Problem p = size_mismatch_problem({size, granularity, nearest_valid_sizes(size, granularity)});
    p.remedy = fmt::format("{}, or add {}", p.remedy, setting_name(Setting::round_up));
    throw Error(std::move(p));
}

// The import check's failure as the first process reports it.
std::optional<Error> import_failure(const ImportCheckResult& r) {
    if (r.problem) {
        Problem p = *r.problem;
        p.message = "import check: " + p.message;
        return Error(std::move(p));
    }
    if (!r.check) return Error(ExitCode::failed, "import check: the second process reported no check");
    if (!r.check->ok()) return pattern_mismatch("import check: the second process", *r.check);
    return std::nullopt;
}

// The import check's request: what its second process is told on its command line (the device as it
// sees it: child_device_view), and with the handle, the allocation (where there is one yet).
ImportCheckRequest import_request(const ChildDeviceView& view, const CreateRequest& request,
                                  const CreateResult* result) {
    ImportCheckRequest r;
    r.executable = request.executable;
    r.libcuda = request.libcuda;
    r.device = request.device;
    r.handle_type = request.memory.handle_type;
    r.imex_channel_dir = request.imex_channel_dir;
    r.timeout = request.import_timeout;
    r.child_device = view.ordinal;
    r.child_env = view.env;
    if (result != nullptr) {
        r.size = result->size;
        r.seed = result->seed;
        r.alignment = result->granularity->minimum;
    }
    return r;
}

// The devices that may touch the mapping (--access) and the pattern checked from each one other than
// the device that wrote it; a mismatch is returned (reported after the teardown).
std::optional<Error> check_access(const DriverApi& api, const CreateRequest& request, CreateResult& result,
                                  StepLog& log) {
    const CUdeviceptr at = *result.address;
    const std::vector<int> devices = access_devices(request.device, request.access);
    const int owner = is_device_memory(request.memory.location.type) ? request.device : -1;
    result.access = log.time("read-access", "cuMemGetAccess", [&] { return mapping_access(api, at, owner, devices); });
    if (!request.verify || !result.verify->ok()) return std::nullopt;
    for (std::size_t i = 1; i < devices.size(); ++i) {
        const int d = devices[i];
        const VerifyResult v = log.time(fmt::format("check-from-{}", d), "check_pattern",
                                        [&] { return check_from_device(api, d, at, result.size, result.seed); });
        result.peer_checks.push_back({d, v});
        if (!v.ok()) return pattern_mismatch(fmt::format("the check from device {}", d), v);
    }
    return std::nullopt;
}

// The pattern written and read back at `at`, then read from each domain's SMs where the memory is
// in a domain; the first mismatch (reported after the teardown).
std::optional<Error> verify_mapping(const DriverApi& api, const CreateRequest& request, CreateResult& result,
                                    CUdeviceptr at, StepLog& log) {
    result.verify =
        log.time("verify", "fill_and_check", [&] { return fill_and_check(api, at, result.size, result.seed); });
    if (!result.verify->ok()) return pattern_mismatch("verify", *result.verify);
    if (!request.memory.location.domain) return std::nullopt;
    result.domain_reads = log.time("domain-reads", "cuGreenCtxCreate", [&] {
        return read_from_each_domain(api, request.device, at, result.size, result.seed, *request.memory.location.domain,
                                     result.domains);
    });
    for (const auto& read : result.domain_reads->reads) {
        if (read.check.ok()) continue;
        return pattern_mismatch(read.domain < 0 ? std::string("the whole-device check")
                                                : fmt::format("the check from domain {}'s SMs", read.domain),
                                read.check);
    }
    return std::nullopt;
}

// Mapping, the pattern, export and the import check, on an allocation that exists. Returns the first
// check failure (reported after the teardown); throws Error for a failed call.
std::optional<Error> use_allocation(const DriverApi& api, const CreateRequest& request, CreateResult& result,
                                    const AllocationHandle& handle, StepLog& log) {
    std::optional<Error> failure;
    std::optional<DeviceMapping> mapping;
    if (request.map) {
        mapping.emplace(api, handle.get(), result.size, result.granularity->minimum,
                        access_devices(request.device, request.access), log);
        result.address = mapping->address();
        result.seed = random_pattern_seed();
        const CUdeviceptr at = mapping->address();
        if (request.memory.location.domain) {
            result.placement = log.time("placement", "cuPointerGetAttribute", [&] {
                return pointer_placement(api, at, *request.memory.location.domain, result.domains);
            });
        }
        if (request.verify) {
            failure = verify_mapping(api, request, result, at, log);
        } else if (request.import_check) {
            result.fill =
                log.time("fill", "fill_pattern", [&] { return fill_pattern(api, at, result.size, result.seed); });
        }
        if (!request.access.empty()) {
            std::optional<Error> peer_failure = check_access(api, request, result, log);
            if (!failure) failure = std::move(peer_failure);
        }
    }
    if (request.dma_buf && mapping) {
        result.dma_buf = export_and_inspect(api, mapping->address(), result.size, request.proc, log);
        if (result.dma_buf->mismatch && !failure) {
            failure = Error(ExitCode::failed, "dma-buf export: " + *result.dma_buf->mismatch,
                            "the driver answered with something other than NVIDIA's dma-buf of the range: report it "
                            "with the driver version (cat /proc/driver/nvidia/version) and this report");
        }
    }
    std::optional<ExportedHandle> exported;
    if (request.export_handle) {
        exported = log.time("export", "cuMemExportToShareableHandle",
                            [&] { return export_handle(api, handle.get(), request.memory.handle_type); });
        result.exported = ExportInfo{exported->type, exported->fd.get(),
                                     exported->type == CU_MEM_HANDLE_TYPE_FABRIC ? exported->fabric_hex() : ""};
    }
    if (request.import_check && !failure) {
        result.import_check = log.time("import-check", "posix_spawn", [&] {
            return run_import_check(import_request(child_device_view(api, request.device), request, &result), *exported,
                                    ImporterSlot{request.importer, request.keep_importer});
        });
        failure = import_failure(*result.import_check);
    }
    if (mapping) mapping->release(log);
    return failure;
}

// Everything after the context: granularity, size, cuMemCreate, properties, use, release.
void create_steps(const DriverApi& api, const CreateRequest& request, DiagnosisContext& context, CreateResult& result,
                  StepLog& log) {
    const CUmemAllocationProp prop = allocation_prop(api, request.memory, request.device);
    result.requested = prop;
    context.prop = prop;
    result.granularity =
        log.time("granularity", "cuMemGetAllocationGranularity", [&] { return allocation_granularity(api, prop); });
    context.granularity = result.granularity->minimum;
    result.size = allocation_size(request.size, result.granularity->minimum, request.round_up);
    context.size = result.size;
    AllocationHandle handle = log.time("create", "cuMemCreate", [&] {
        CUmemGenericAllocationHandle h = 0;
        CU_CALL(api, cuMemCreate, &h, result.size, &prop, 0);
        return AllocationHandle(api, h);
    });
    result.granted = log.time("properties", "cuMemGetAllocationPropertiesFromHandle", [&] {
        CUmemAllocationProp granted{};
        CU_CALL(api, cuMemGetAllocationPropertiesFromHandle, &granted, handle.get());
        return granted;
    });
    std::optional<Error> failure = use_allocation(api, request, result, handle, log);
    log.time("release", "cuMemRelease", [&] { handle.release(); });
    if (failure) throw *failure;
}

}  // namespace

ipc::Child start_create_importer(const DriverApi& api, const CreateRequest& request) {
    return start_create_importer(request, child_device_view(api, request.device));
}

ipc::Child start_create_importer(const CreateRequest& request, const ChildDeviceView& view) {
    return start_importer(import_check_start(import_request(view, request, nullptr)));
}

void run_create(const DriverApi& api, const CreateRequest& request, CreateResult& result) {
    result.requested_size = request.size;
    DiagnosisContext context;
    context.device = request.device;
    context.size = request.size;
    context.imex_channel_dir = request.imex_channel_dir;
    StepLog log([&](Problem& p) { diagnose_problem(api, p, context); });
    // The steps are the result's on every way out, a failure included.
    const ScopeExit keep_steps([&] { result.steps = log.steps(); });
    // A locality domain is checked against the driver and the device's count before anything is made.
    if (request.memory.location.domain) {
        result.domains = log.time("locality", "cuDeviceGetAttribute", [&] {
            localized_location(api, request.device, *request.memory.location.domain);
            return device_attribute(api, request.device, locality::kAttrDomainCount).value_or(1);
        });
    }
    if (request.dma_buf)
        log.time("dma-buf-support", "cuDeviceGetAttribute", [&] { require_dma_buf(api, request.device); });
    if (!request.access.empty() && is_device_memory(request.memory.location.type)) {
        log.time("peer-access", "cuDeviceCanAccessPeer",
                 [&] { require_peer_access(api, request.device, request.access); });
    }
    std::optional<PrimaryContext> ctx;
    log.time("context", "cuDevicePrimaryCtxRetain", [&] { ctx.emplace(api, request.device); });
    result.before = log.time("snapshot", "cuMemGetInfo", [&] { return take_snapshot(api); });
    // The verify kernels stay loaded in the context until unloaded: unload them before the second
    // snapshot, so that it compares like with like.
    const bool kernels = request.verify || request.import_check;
    try {
        create_steps(api, request, context, result, log);
    } catch (const Error&) {
        try {
            if (kernels) unload_verify_kernels(api);
            result.after = take_snapshot(api);
        } catch (const Error&) {
            // The first failure is the one to report.
        }
        throw;
    }
    if (kernels) {
        log.time("unload-kernels", "cuModuleUnload", [&] { unload_verify_kernels(api); });
    }
    result.after = log.time("snapshot", "cuMemGetInfo", [&] { return take_snapshot(api); });
}

}  // namespace cumemctl::gpu
