// The per-device checks that allocate: VMM memory mapped and verified, a POSIX-fd handle imported by
// a second process, a pool workload trimmed, an IPC pool shared, host memory, fabric memory. Each runs
// an operation of src/gpu/ (the one behind create, trim or create --pool) with the smallest size the
// driver allows, and holds the device's primary context (DeviceState) so that the operation's own
// retain never makes a second one. A failed check keeps the operation's steps in its details.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <random>

#include <fmt/format.h>

#include "cuda/driver_call.hpp"
#include "doctor/registry.hpp"
#include "doctor/runner.hpp"
#include "gpu/diagnosis/fabric_probe.hpp"
#include "gpu/pool/pool_create.hpp"
#include "gpu/pool/pool_pattern.hpp"
#include "gpu/pool/pool_trim.hpp"
#include "gpu/vmm/resource_snapshot.hpp"
#include "gpu/vmm/vmm_create.hpp"
#include "imex/channel_folder.hpp"
#include "ipc/timeout.hpp"
#include "nvml/memory_health.hpp"
#include "util/size.hpp"

namespace cumemctl::doctor {
using namespace gpu;
namespace {

// How long a check waits for its second process: about 0.2 s is usual on an H200; a process that has
// not answered by then is hung, and doctor must still finish.
constexpr ipc::Timeout kSecondProcessTimeout{20000};

// Whether the device's capability is known and set.
bool has(DeviceState& device, std::string_view key) {
    return capability_of(device.info(), key).value_or(0) != 0;
}

// A failed operation as a check's outcome: the error's message, cause and remedy, and what was done.
CheckOutcome failed(const Problem& problem, Evidence details) {
    return outcome_from_error(problem).with_evidence(std::move(details));
}

// This process's memory on the device as NVML counts it, before and after a check's work: evidence
// beside the verdict, which rests on this process's own handles. NVML lists host PIDs: inside a
// container without the host's PID namespace it does not list this process, and that is said, not
// judged. Nothing without NVML.
class NvmlProcessMemory {
public:
    NvmlProcessMemory(DoctorContext& ctx, DeviceState& device) {
        if (ctx.nvml == nullptr || !ctx.nvml->loaded()) return;
        const DeviceInfo* info = device.peek_info();
        if (info == nullptr || info->uuid.empty()) return;
        nvml_ = ctx.nvml;
        handle_ = nvml_->device_by_uuid(info->uuid, &why_);
        if (handle_) before_ = nvml::process_memory(*nvml_, *handle_, getpid(), &why_);
    }

    // NVML's figures before and after, or why not; none without NVML.
    std::optional<ProcessMemory> after() {
        if (nvml_ == nullptr) return std::nullopt;
        std::optional<std::uint64_t> now;
        if (handle_ && before_) now = nvml::process_memory(*nvml_, *handle_, getpid(), &why_);
        ProcessMemory m;
        if (!before_ || !now) {
            m.unavailable = why_;
            return m;
        }
        delta_ = static_cast<std::int64_t>(*now) - static_cast<std::int64_t>(*before_);
        m.source = "nvml", m.before_bytes = *before_, m.after_bytes = *now, m.delta_bytes = *delta_;
        return m;
    }

    // What NVML counts more for this process after than before, where it said both.
    std::optional<std::int64_t> delta() const { return delta_; }

private:
    const nvml::Library* nvml_ = nullptr;
    std::optional<nvml::Device> handle_;
    std::optional<std::uint64_t> before_;
    std::optional<std::int64_t> delta_;
    std::string why_;
};

// A check's failure when this thread did not give back what it made: a handle that a guard could not
// release (the refused release calls of `steps` named). Descriptors are the process's, shared by the
// device threads, and device free memory other processes move: neither plays a part.
// NVML's count of this process's memory (`memory`) goes into the details as evidence; it adds to the
// reason of a failure, and decides nothing.
std::optional<CheckOutcome> leak_outcome(const std::optional<ResourceSnapshot>& before,
                                         const std::optional<ResourceSnapshot>& after,
                                         const std::vector<steps::Step>& steps, MemoryEvidence& details,
                                         NvmlProcessMemory& memory) {
    if (auto evidence = memory.after()) details.process_memory = std::move(*evidence);
    if (!before || !after) return std::nullopt;
    const ResourceDelta d = compare(*before, *after);
    details.handles_not_released = d.lost_handles;
    if (d.lost_handles == 0) return std::nullopt;
    const std::vector<std::string> refused = failed_releases(steps);
    const auto grew = memory.delta();
    return CheckOutcome::fail(
        fmt::format("this process did not give back what it made: {} handle{} not released{}{}", d.lost_handles,
                    d.lost_handles == 1 ? "" : "s",
                    refused.empty() ? "" : fmt::format(" ({})", fmt::join(refused, ", ")),
                    grew && *grew > 0 ? fmt::format("; NVML counts {} more for this process on the device",
                                                    format_size(static_cast<std::uint64_t>(*grew)))
                                      : ""),
        "a leak in this process until it ends: report it with the driver version", details);
}

// What one create did, for a check's details.
MemoryEvidence create_details(const CreateResult& r) {
    MemoryEvidence e;
    e.size_bytes = r.size, e.steps = r.steps;
    if (r.verify) e.verify = *r.verify;
    if (r.import_check) {
        // Its exit status where it ended (a failed exchange); an importer that answered serves on.
        ImporterEvidence& importer = e.importer.emplace();
        importer.pid = r.import_check->pid, importer.steps = r.import_check->steps;
        if (r.import_check->exit_status >= 0) importer.exit_status = r.import_check->exit_status;
        if (r.import_check->check) importer.verify = *r.import_check->check;
    }
    return e;
}

// The create that a check runs: one granule of `memory` through create's steps (with `import_check`,
// a second process imports the POSIX fd, maps it and checks the pattern).
CreateRequest create_request(DoctorContext& ctx, int ordinal, const MemoryRequest& memory, bool import_check) {
    CreateRequest request;
    request.device = ordinal;
    request.memory = memory;
    request.size = 1;
    request.round_up = true;
    request.map = true;
    request.verify = true;
    request.export_handle = import_check;
    request.import_check = import_check;
    request.imex_channel_dir = ctx.path(imex::kImexChannelDir);
    request.executable = ipc::kSelfExecutable;
    request.libcuda = ctx.driver->info().library;
    request.import_timeout = kSecondProcessTimeout;
    return request;
}

MemoryRequest posix_fd_memory() {
    MemoryRequest memory;
    memory.handle_type = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    return memory;
}

// The IPC check of ipc-pool (the pool's device, size and handle type are filled in by create_pool_and_check).
IpcRequest ipc_request(DoctorContext& ctx, int ordinal) {
    IpcRequest ipc;
    std::random_device random;
    ipc.device = ordinal;
    ipc.seed = (std::uint64_t{random()} << 32) | random();
    ipc.libcuda = ctx.driver->info().library;
    ipc.timeout = kSecondProcessTimeout;
    ipc.imex_channel_dir = ctx.path(imex::kImexChannelDir);
    return ipc;
}

// Whether the capability is set in `info` (null: unknown, so no).
bool has_capability(const DeviceInfo* info, std::string_view key) {
    return info != nullptr && capability_of(*info, key).value_or(0) != 0;
}

bool posix_fd_ipc_applies(const DeviceInfo* info) {
    return has_capability(info, "vmm") && has_capability(info, "posix_fd");
}

bool ipc_pool_applies(const DeviceInfo* info) {
    return has_capability(info, "memory_pools") &&
           (capability_of(*info, "pool_handle_types").value_or(0) & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) != 0;
}

// The create of a check through create's steps, then everything released; with `import_check` the
// device's importer (started ahead where it was, and kept for the device's next IPC check). Returns
// the details and, on failure, the outcome.
std::pair<MemoryEvidence, std::optional<CheckOutcome>> small_create(DoctorContext& ctx, DeviceState& device,
                                                                    const MemoryRequest& memory, bool import_check) {
    device.context();
    CreateRequest request = create_request(ctx, device.ordinal(), memory, import_check);
    if (import_check) {
        request.importer = &device.importer();
        request.keep_importer = true;
    }
    NvmlProcessMemory nvml_memory(ctx, device);
    CreateResult result;
    try {
        run_create(device.api(), request, result);
    } catch (const Error& e) {
        return {create_details(result), failed(e.problem(), create_details(result))};
    }
    MemoryEvidence details = create_details(result);
    if (auto leak = leak_outcome(result.before, result.after, result.steps, details, nvml_memory))
        return {details, leak};
    return {details, std::nullopt};
}

}  // namespace

void start_importer(DoctorContext& ctx, DeviceState& device, const std::vector<std::string_view>& checks) {
    const auto selected = [&](std::string_view id) {
        return std::find(checks.begin(), checks.end(), id) != checks.end();
    };
    if (ctx.driver == nullptr || device.importer()) return;
    const DeviceInfo* info = device.peek_info();
    if (!(selected(kCheckPosixFdIpc) && posix_fd_ipc_applies(info)) &&
        !(selected(kCheckIpcPool) && ipc_pool_applies(info))) {
        return;
    }
    try {
        device.importer() = gpu::start_importer(ImporterStart{ipc::kSelfExecutable, ctx.driver->info().library,
                                                              child_device_view(device.api(), device.ordinal())});
    } catch (const Error&) {
    }
}

bool early_importers_apply(const DoctorContext& ctx, const std::vector<std::string_view>& checks) {
    // Only where the driver will show the listed GPUs: every device asked for, none hidden.
    return std::any_of(checks.begin(), checks.end(), importer_serves) && ctx.driver != nullptr &&
           ctx.driver->loaded() && ctx.options.devices.all && std::getenv("CUDA_VISIBLE_DEVICES") == nullptr;
}

std::vector<EarlyImporter> start_importers_early(const DoctorContext& ctx, std::vector<std::string> uuids) {
    std::vector<EarlyImporter> out;
    // Each GPU once. A list longer than any node's GPUs (a system root's folder that someone filled)
    // starts none: the devices' own importers start with their checks.
    std::sort(uuids.begin(), uuids.end());
    uuids.erase(std::unique(uuids.begin(), uuids.end()), uuids.end());
    std::erase(uuids, std::string());
    if (uuids.size() > kMostEarlyImporters) return out;
    try {
        for (const std::string& uuid : uuids) {
            const ChildDeviceView view{0, {{"CUDA_VISIBLE_DEVICES", uuid}}};
            out.push_back(
                {uuid, gpu::start_importer(ImporterStart{ipc::kSelfExecutable, ctx.driver->info().library, view})});
        }
    } catch (const Error&) {
        // What started is used; the rest is left to the device's own start.
    }
    return out;
}

CheckOutcome check_vmm(DoctorContext& ctx, DeviceState* device) {
    if (!has(*device, "vmm")) return CheckOutcome::skip("the device does not support VMM (see capabilities)");
    auto [details, failure] = small_create(ctx, *device, MemoryRequest{}, false);
    if (failure) return *failure;
    const std::string size = format_size(details.size_bytes.value_or(0));
    return CheckOutcome::pass(size + " created, mapped, written and checked on the device", std::move(details));
}

CheckOutcome check_posix_fd_ipc(DoctorContext& ctx, DeviceState* device) {
    if (!posix_fd_ipc_applies(&device->info())) {
        return CheckOutcome::skip("the device does not support VMM with POSIX-fd handles (see capabilities)");
    }
    auto [details, failure] = small_create(ctx, *device, posix_fd_memory(), true);
    if (failure) return *failure;
    const std::string size = format_size(details.size_bytes.value_or(0));
    return CheckOutcome::pass("a second process imported the POSIX fd of " + size + ", mapped it and found the pattern",
                              std::move(details));
}

CheckOutcome check_pool_trim(DoctorContext&, DeviceState* device) {
    if (!has(*device, "memory_pools")) return CheckOutcome::skip("the device has no memory pools (see capabilities)");
    device->context();
    const DriverApi& api = device->api();
    const int dev = device->ordinal();
    const CUmemLocation location{CU_MEM_LOCATION_TYPE_DEVICE, dev};
    const PoolInfo pool = default_pool(api, dev, location, CU_MEM_ALLOCATION_TYPE_PINNED);
    const std::uint64_t granule = pool_granule(api, location);
    const WorkloadPattern pattern = parse_workload_pattern(fmt::format("8x{}", granule));
    require_room(api, "the trim workload", pool_footprint(pattern, granule), location, 0);
    const TrimResult r = run_trim(api, pool.handle, pattern, 0, granule);
    PoolTrimEvidence details{r.figures, pattern.text, r.trim_seconds};
    if (!r.verdict.returned) {
        return CheckOutcome::fail(r.verdict.reason,
                                  "the driver kept pool memory that cuMemPoolTrimTo should have released: run "
                                  "'cumemctl trim' to see it again; if it stays, report it with the driver version",
                                  std::move(details));
    }
    return CheckOutcome::pass(r.verdict.reason, std::move(details));
}

CheckOutcome check_ipc_pool(DoctorContext& ctx, DeviceState* device) {
    if (!ipc_pool_applies(&device->info())) {
        return CheckOutcome::skip("the device's pools cannot export POSIX-fd handles (see capabilities)");
    }
    device->context();
    const DriverApi& api = device->api();
    PoolRequest request;
    request.handle_type = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    const std::uint64_t size = pool_granule(api, CUmemLocation{CU_MEM_LOCATION_TYPE_DEVICE, device->ordinal()});
    IpcRequest ipc = ipc_request(ctx, device->ordinal());
    ipc.importer = &device->importer();
    ipc.keep_importer = true;
    NvmlProcessMemory nvml_memory(ctx, *device);
    const CreatePoolResult r = create_pool_and_check(api, device->ordinal(), request, size, ipc);
    MemoryEvidence details;
    details.size_bytes = size, details.steps = r.outcome.steps();
    if (r.outcome.problem()) return failed(*r.outcome.problem(), std::move(details));
    if (auto leak = leak_outcome(r.before, r.after, r.outcome.steps(), details, nvml_memory)) return *leak;
    return CheckOutcome::pass(fmt::format("a second process imported an IPC pool (POSIX fd) and a {} block of it, "
                                          "and found the pattern",
                                          format_size(size)),
                              std::move(details));
}

CheckOutcome check_host_alloc(DoctorContext& ctx, DeviceState* device) {
    // Each location with its name and the evidence field it fills.
    struct Location {
        LocationSpec spec;
        std::string name;
        Maybe<MemoryEvidence> HostAllocEvidence::*field;
    };
    std::vector<Location> locations;
    if (has(*device, "host_vmm"))
        locations.push_back(
            {{CU_MEM_LOCATION_TYPE_HOST, std::nullopt, std::nullopt}, "host", &HostAllocEvidence::host});
    if (has(*device, "host_numa_vmm") && capability_of(device->info(), "host_numa_id").value_or(-1) >= 0) {
        locations.push_back(
            {{CU_MEM_LOCATION_TYPE_HOST_NUMA, std::nullopt, std::nullopt}, "host-numa", &HostAllocEvidence::host_numa});
    }
    if (locations.empty()) return CheckOutcome::skip("the device does not support VMM host memory (see capabilities)");
    std::vector<std::string> done;
    HostAllocEvidence details;
    for (const auto& [spec, name, field] : locations) {
        MemoryRequest memory;
        memory.location = spec;
        auto [one, failure] = small_create(ctx, *device, memory, false);
        details.*field = one;
        if (failure) {
            failure->reason = name + " memory: " + failure->reason;
            return failure->with_evidence(std::move(details));
        }
        done.push_back(fmt::format("{} {}", name, format_size(one.size_bytes.value_or(0))));
    }
    return CheckOutcome::pass(fmt::format("{}: created, mapped and checked from the device", fmt::join(done, ", ")),
                              std::move(details));
}

CheckOutcome check_fabric_alloc(DoctorContext& ctx, DeviceState* device) {
    if (!has(*device, "fabric")) return CheckOutcome::skip("the device does not support fabric handles");
    device->context();
    StepLog log;
    try {
        const FabricProbe p =
            probe_fabric_handle(device->api(), device->ordinal(), ctx.path(imex::kImexChannelDir), log);
        return CheckOutcome::pass(
            fmt::format("{} of fabric-handle memory created and exported", format_size(p.granularity)),
            MemoryEvidence{p.granularity, log.steps(), {}, {}, {}, {}, {}});
    } catch (const Error& e) {
        // CUDA_ERROR_NOT_PERMITTED: this process can open no IMEX channel, a set-up step that imex-setup
        // does: a warning, as for imex-channels, with the diagnosis (which names the channel folder as
        // found) in the details. Anything else is a failure.
        const Problem& p = e.problem();
        if (!p.driver || result_of(*p.driver) != CUDA_ERROR_NOT_PERMITTED) {
            return failed(p, MemoryEvidence{{}, log.steps(), {}, {}, {}, {}, {}});
        }
        CheckOutcome o = CheckOutcome::warn(
            fmt::format("{} ({}): this process can open no IMEX channel", p.driver->call, p.driver->name), p.remedy,
            MemoryEvidence{{}, log.steps(), {}, {}, {}, {}, p.cause});
        o.driver = p.driver;
        return o;
    }
}

}  // namespace cumemctl::doctor
