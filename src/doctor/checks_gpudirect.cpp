// The gpudirect check: whether the node's RDMA NICs can reach each GPU's memory (GPUDirect RDMA), as
// NCCL, UCX and NVSHMEM do it: a dma-buf descriptor of the memory (cuMemGetHandleForAddressRange), or
// the older nvidia-peermem module. Where neither works NCCL logs "GPU Direct RDMA Disabled" and stages
// through host memory, silently slower. The node's side (RDMA devices, nvidia_peermem, the kernel
// module's flavour, the kernel) is read from /sys and /proc under the sysroot; the GPU's from its
// attributes and, outside --quick, from two real exports, each descriptor checked and closed.
#include <dirent.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "base/setting.hpp"
#include "cuda/driver_call.hpp"
#include "doctor/registry.hpp"
#include "doctor/runner.hpp"
#include "gpu/vmm/dma_buf.hpp"
#include "gpu/vmm/resource_snapshot.hpp"
#include "gpu/vmm/vmm_create.hpp"
#include "ipc/child.hpp"
#include "util/text_file.hpp"

namespace cumemctl::doctor {
using namespace gpu;
namespace {

// The size of each export: one granule of the H200 (and a multiple of any host page).
constexpr std::uint64_t kExportBytes = 2ULL << 20;

// The node's side of GPUDirect RDMA.
struct RdmaNode {
    std::vector<std::string> devices;  // /sys/class/infiniband: mlx5_0, ...
    bool peermem = false;              // /sys/module/nvidia_peermem: the legacy module is loaded
    std::string flavour;               // "open", "proprietary", or "" where /proc/driver/nvidia/version does not say
    std::string kernel;                // the kernel's release (5.15.0-91-generic)
};

// The names in a folder, sorted; empty where it cannot be read.
std::vector<std::string> folder_names(const std::string& path) {
    std::vector<std::string> names;
    DIR* dir = opendir(path.c_str());
    if (dir == nullptr) return names;
    while (const dirent* e = readdir(dir)) {
        if (e->d_name[0] != '.') names.emplace_back(e->d_name);
    }
    closedir(dir);
    std::sort(names.begin(), names.end());
    return names;
}

bool opendir_ok(const std::string& path) {
    DIR* dir = opendir(path.c_str());
    if (dir == nullptr) return false;
    closedir(dir);
    return true;
}

RdmaNode rdma_node(const DoctorContext& ctx) {
    RdmaNode node;
    node.devices = folder_names(ctx.path("/sys/class/infiniband"));
    node.peermem = opendir_ok(ctx.path("/sys/module/nvidia_peermem"));
    // "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04 ..." or, proprietary,
    // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05 ...".
    const std::string version = try_read_text_file(ctx.path("/proc/driver/nvidia/version")).value_or("");
    const std::string first = version.substr(0, version.find('\n'));
    if (first.find("Open Kernel Module") != std::string::npos) {
        node.flavour = "open";
    } else if (first.find("Kernel Module") != std::string::npos) {
        node.flavour = "proprietary";
    }
    std::istringstream release(try_read_text_file(ctx.path("/proc/sys/kernel/osrelease")).value_or(""));
    release >> node.kernel;
    return node;
}

// Whether a kernel release is 5.12 or later, the first with dma-buf for RDMA (ib_umem_dmabuf); nullopt
// where it does not parse.
std::optional<bool> kernel_has_rdma_dma_buf(const std::string& release) {
    int major = 0, minor = 0;
    if (std::sscanf(release.c_str(), "%d.%d", &major, &minor) != 2) return std::nullopt;
    return major > 5 || (major == 5 && minor >= 12);
}

std::optional<bool> optional_flag(const std::optional<int>& v) {
    return v ? std::optional<bool>(*v != 0) : std::nullopt;
}

GpudirectEvidence node_evidence(const RdmaNode& node) {
    GpudirectEvidence e;
    e.rdma_devices = node.devices, e.nvidia_peermem = node.peermem;
    e.kernel_modules = text_or_none(node.flavour), e.kernel = text_or_none(node.kernel);
    return e;
}

// What keeps dma-buf from this node, for the remedy where neither path works.
std::string no_path_remedy(const RdmaNode& node) {
    std::vector<std::string> wanting;
    if (node.flavour != "open") {
        wanting.push_back(node.flavour.empty() ? "NVIDIA's open kernel modules (this node's flavour is unknown)"
                                               : "NVIDIA's open kernel modules (this node runs the proprietary ones)");
    }
    const auto new_enough = kernel_has_rdma_dma_buf(node.kernel);
    if (!new_enough || !*new_enough) {
        wanting.push_back(node.kernel.empty() ? "Linux 5.12 or later"
                                              : fmt::format("Linux 5.12 or later (this node runs {})", node.kernel));
    }
    return fmt::format(
        "dma-buf needs {}; else load the legacy module: modprobe nvidia-peermem (and add it to "
        "/etc/modules-load.d so that it loads at boot)",
        wanting.empty() ? std::string("a driver that offers it") : fmt::format("{}", fmt::join(wanting, " and ")));
}

// What try_exports found so far, kept in the check's details when it ends.
struct ExportLog {
    GpudirectEvidence& details;
    std::vector<ExportEvidence> exports;
    std::vector<steps::Step> steps;
    void keep() {
        details.exports = exports;
        details.steps = steps;
    }
};

// A refused export, naming what the driver said of the device: it claims dma-buf and refuses it.
CheckOutcome refused_export(ExportLog& log, DeviceState& device, const Problem& p, std::string_view memory) {
    log.keep();
    CheckOutcome o = outcome_from_error(p).with_evidence(log.details);
    if (p.driver && failed_at(*p.driver, "cuMemGetHandleForAddressRange")) {
        o.reason = fmt::format(
            "the driver says device {} exports dma-bufs (CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED 1) "
            "and refused the export of {} memory: {} {}",
            device.ordinal(), memory, p.driver->call, p.driver->name);
        o.remedy =
            "NCCL falls back to host memory here ('GPU Direct RDMA Disabled'): check that the open kernel "
            "modules are loaded (cat /proc/driver/nvidia/version) on Linux 5.12 or later, and report it "
            "with nvidia-bug-report.sh";
        o.brief = "dma-buf export refused";
    }
    return o;
}

// An export recorded; a failure where its descriptor is not NVIDIA's dma-buf of the size asked.
std::optional<CheckOutcome> judge_export(ExportLog& log, const DmaBufExport& e, std::string_view memory) {
    log.exports.push_back({e, std::string(memory)});
    if (!e.mismatch) return std::nullopt;
    log.keep();
    CheckOutcome o = CheckOutcome::fail(
        fmt::format("the dma-buf of {} memory is not NVIDIA's of the size asked: {}", memory, *e.mismatch),
        "report it with the driver version (cat /proc/driver/nvidia/version) and this report", log.details);
    o.brief = "not NVIDIA's dma-buf";
    return o;
}

// The export of RDMA-capable cuMemCreate memory, through create's steps.
std::optional<CheckOutcome> export_vmm_memory(DeviceState& device, const std::string& proc, ExportLog& log) {
    CreateRequest request;
    request.device = device.ordinal();
    request.memory.rdma = true;
    request.size = kExportBytes;
    request.round_up = true;
    request.map = true;
    request.dma_buf = true;
    request.proc = proc;
    request.executable = ipc::kSelfExecutable;
    CreateResult result;
    try {
        run_create(device.api(), request, result);
    } catch (const Error& e) {
        log.steps = result.steps;
        // An export that came back as something else is judged as such; any other failure is the call's.
        if (result.dma_buf && result.dma_buf->mismatch) return judge_export(log, *result.dma_buf, "cuMemCreate");
        return refused_export(log, device, e.problem(), "RDMA-capable cuMemCreate");
    }
    log.steps = result.steps;
    if (result.before && result.after)
        log.details.handles_not_released = compare(*result.before, *result.after).lost_handles;
    return judge_export(log, *result.dma_buf, "cuMemCreate");
}

// The exports of one device: RDMA-capable cuMemCreate memory (where the device offers GPUDirect RDMA
// with VMM) and cuMemAlloc memory. Returns a failure, or nullopt where every descriptor was NVIDIA's
// dma-buf of the size asked; `details` gets the exports and the steps.
std::optional<CheckOutcome> try_exports(DoctorContext& ctx, DeviceState& device, GpudirectEvidence& details) {
    const DriverApi& api = device.api();
    device.context();
    const std::string proc = ctx.path("/proc");
    ExportLog log{details, {}, {}};
    if (capability_of(device.info(), "vmm").value_or(0) != 0 &&
        capability_of(device.info(), "gpudirect_rdma_vmm").value_or(0) != 0) {
        if (auto bad = export_vmm_memory(device, proc, log)) return bad;
    }
    steps::StepLog steps(api, {});
    try {
        const DmaBufExport e = export_linear_memory(api, kExportBytes, proc, steps);
        for (const auto& s : steps.steps()) log.steps.push_back(s);
        if (auto bad = judge_export(log, e, "cuMemAlloc")) return bad;
    } catch (const Error& e) {
        for (const auto& s : steps.steps()) log.steps.push_back(s);
        return refused_export(log, device, e.problem(), "cuMemAlloc");
    }
    log.keep();
    return std::nullopt;
}

}  // namespace

CheckOutcome check_gpudirect(DoctorContext& ctx, DeviceState* device) {
    const RdmaNode node = rdma_node(ctx);
    const DeviceInfo& info = device->info();
    const auto dma_buf = capability_of(info, "dma_buf");
    const auto rdma = capability_of(info, "gpudirect_rdma");
    GpudirectEvidence details = node_evidence(node);
    details.dma_buf = optional_flag(dma_buf);
    details.gpudirect_rdma = optional_flag(rdma);
    details.gpudirect_rdma_vmm = optional_flag(capability_of(info, "gpudirect_rdma_vmm"));
    if (node.devices.empty()) {
        return CheckOutcome::skip("not applicable: no RDMA device on this node (/sys/class/infiniband lists none)",
                                  std::move(details));
    }
    const std::string nics = fmt::format("{}", fmt::join(node.devices, ", "));
    if (rdma && *rdma == 0) {
        CheckOutcome o = CheckOutcome::warn(
            fmt::format(
                "device {} has no GPUDirect RDMA (CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED 0): {} reach its "
                "memory only through host memory",
                device->ordinal(), nics),
            "nothing to change in software: this GPU model has no GPUDirect RDMA; NCCL stages through host memory",
            std::move(details));
        o.brief = "no GPUDirect RDMA";
        return o;
    }
    if (dma_buf.value_or(0) != 0) {
        if (ctx.options.quick) {
            return CheckOutcome::pass(
                fmt::format("the driver offers dma-buf export (not tried under {}); RDMA devices {}",
                            setting_name(Setting::quick), nics),
                std::move(details));
        }
        if (auto failed = try_exports(ctx, *device, details)) return *failed;
        const bool both = details.exports && details.exports->size() == 2;
        return CheckOutcome::pass(
            fmt::format(
                "dma-buf export works: {}, 2 MiB each, NVIDIA's dma-buf of that size, closed{}; RDMA devices {}",
                both ? "RDMA-capable cuMemCreate and cuMemAlloc memory" : "cuMemAlloc memory",
                both ? "" : " (no GPUDirect RDMA with VMM: cuMemCreate not tried)", nics),
            std::move(details));
    }
    const std::string why_no_dma_buf =
        dma_buf ? "the device exports no dma-buf (CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED 0)"
                : "this driver does not know dma-buf export (CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, CUDA 11.7)";
    if (node.peermem) {
        return CheckOutcome::pass(
            fmt::format("{}; GPUDirect RDMA goes through nvidia_peermem, the legacy path; RDMA devices {}",
                        why_no_dma_buf, nics),
            std::move(details));
    }
    CheckOutcome o = CheckOutcome::fail(
        fmt::format("no way for {} to reach the GPU's memory: {} and nvidia_peermem is not loaded (NCCL logs 'GPU "
                    "Direct RDMA Disabled' and stages through host memory)",
                    nics, why_no_dma_buf),
        no_path_remedy(node), std::move(details));
    o.brief = "no dma-buf, no nvidia_peermem";
    return o;
}

}  // namespace cumemctl::doctor
