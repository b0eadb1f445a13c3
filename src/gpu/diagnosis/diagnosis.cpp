#include "gpu/diagnosis/diagnosis.hpp"

#include <sys/sysinfo.h>

#include <limits>
#include <vector>

#include <fmt/format.h>

#include "base/setting.hpp"
#include "cuda/driver_call.hpp"
#include "gpu/device/devices.hpp"
#include "gpu/device/held_device.hpp"
#include "gpu/device/locality.hpp"
#include "gpu/device/memory_props.hpp"
#include "util/size.hpp"

namespace cumemctl::gpu {
namespace {

// A device attribute that must be 1 for what was asked, with its name and what it enables.
struct AttributeNeed {
    int attribute;
    const char* name;
    const char* meaning;
};

#define CUMEMCTL_NEED(attr, meaning)                                      \
    AttributeNeed {                                                       \
        CU_DEVICE_ATTRIBUTE_##attr, "CU_DEVICE_ATTRIBUTE_" #attr, meaning \
    }

// The device the context is about: the one named, else the device of a device location.
int device_of(const DiagnosisContext& c) {
    if (c.device >= 0) return c.device;
    if (c.prop && is_device_memory(c.prop->location)) return location_device(c.prop->location);
    return -1;
}

// The handle types involved: those requested at creation, or the one exported or imported.
unsigned handle_types_of(const DiagnosisContext& c) {
    return c.prop ? c.prop->requestedHandleTypes | c.handle_type : c.handle_type;
}

// The attributes the request depends on, most basic first.
std::vector<AttributeNeed> needs_of(const DiagnosisContext& c) {
    std::vector<AttributeNeed> needs;
    if (c.prop) {
        switch (c.prop->location.type) {
            case CU_MEM_LOCATION_TYPE_HOST:
                needs.push_back(
                    CUMEMCTL_NEED(HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, "host memory with cuMemCreate"));
                break;
            case CU_MEM_LOCATION_TYPE_HOST_NUMA:
                needs.push_back(
                    CUMEMCTL_NEED(HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, "host NUMA memory with cuMemCreate"));
                break;
            default:
                needs.push_back(CUMEMCTL_NEED(VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, "cuMemCreate and cuMemMap"));
        }
    }
    const unsigned types = handle_types_of(c);
    if (types & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
        needs.push_back(CUMEMCTL_NEED(HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, "POSIX file descriptor handles"));
    }
    if (types & CU_MEM_HANDLE_TYPE_FABRIC) {
        needs.push_back(CUMEMCTL_NEED(HANDLE_TYPE_FABRIC_SUPPORTED, "fabric handles"));
        if (c.prop && c.prop->location.type == CU_MEM_LOCATION_TYPE_HOST_NUMA) {
            needs.push_back(CUMEMCTL_NEED(HOST_NUMA_MULTINODE_IPC_SUPPORTED, "sharing host NUMA memory between nodes"));
        }
    }
    if (c.prop && c.prop->allocFlags.compressionType == CU_MEM_ALLOCATION_COMP_GENERIC) {
        needs.push_back(CUMEMCTL_NEED(GENERIC_COMPRESSION_SUPPORTED, "generic compression"));
    }
    if (c.prop && c.prop->allocFlags.gpuDirectRDMACapable != 0) {
        needs.push_back(CUMEMCTL_NEED(GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED, "GPUDirect RDMA with cuMemCreate"));
    }
    if (c.prop && (c.prop->allocFlags.usage & CU_MEM_CREATE_USAGE_TILE_POOL) != 0) {
        needs.push_back(CUMEMCTL_NEED(SPARSE_CUDA_ARRAY_SUPPORTED, "sparse CUDA arrays, which tile pools back"));
    }
    return needs;
}

#undef CUMEMCTL_NEED

// An attribute's value; nullopt where the driver does not know it (or cannot be asked).
std::optional<int> read_attribute(const DriverApi& api, int device, int attribute) {
    if (device < 0 || api.cuDeviceGetAttribute == nullptr) return std::nullopt;
    try {
        return device_attribute(api, device, attribute);
    } catch (const Error&) {
        return std::nullopt;
    }
}

// The first need whose attribute is 0, or (when none is 0) the first the driver does not know.
std::optional<Diagnosis> missing_attribute(const DriverApi& api, const DiagnosisContext& c) {
    const int device = device_of(c);
    std::optional<AttributeNeed> unknown;
    for (const auto& need : needs_of(c)) {
        const auto value = read_attribute(api, device, need.attribute);
        if (value && *value == 0) {
            return Diagnosis{fmt::format("device {} has {} = 0: no {}", device, need.name, need.meaning),
                             "leave that option out, or use a device and driver that support it "
                             "(see 'cumemctl devices')",
                             ExitCode::unavailable};
        }
        if (!value && !unknown) unknown = need;
    }
    if (unknown) {
        return Diagnosis{fmt::format("this driver does not know {}: it predates {}", unknown->name, unknown->meaning),
                         "upgrade the NVIDIA driver, or leave that option out", ExitCode::unavailable};
    }
    return std::nullopt;
}

Diagnosis imex_diagnosis(const DiagnosisContext& c) {
    const ImexChannelAccess access = read_channel_access(c.imex_channel_dir);
    if (!access.accessible.empty()) {
        return Diagnosis{fmt::format("the driver refused fabric handles although {}; the node may not carry the "
                                     "driver's device number (the major of nvidia-caps-imex-channels in /proc/devices)",
                                     access.describe()),
                         fmt::format("run 'cumemctl {}' to compare the node with the driver's numbers ('{}' "
                                     "replaces a wrong node), then run this again",
                                     command_line(Command::imex_setup, {{Setting::check_only}}),
                                     command_flag(Command::imex_setup, Setting::replace_nodes)),
                         ExitCode::permission};
    }
    const std::string cause =
        fmt::format("fabric handles need an IMEX channel node that this process can open, and there is none: {}",
                    access.describe());
    return Diagnosis{cause, access.remedy(), ExitCode::permission};
}

// CUDA_ERROR_DEVICE_UNAVAILABLE: the device's compute mode lets no context of this process on it.
Diagnosis unavailable_diagnosis(const DriverApi& api, const DiagnosisContext& c) {
    const auto mode = read_attribute(api, device_of(c), CU_DEVICE_ATTRIBUTE_COMPUTE_MODE);
    const std::string why =
        mode == static_cast<int>(CU_COMPUTEMODE_PROHIBITED)
            ? std::string("its compute mode is prohibited")
            : std::string("it is in exclusive-process compute mode and another process holds its context");
    return Diagnosis{
        fmt::format("device {} is unavailable to this process: {}; nothing was allocated on it", device_of(c), why),
        "run this again when that process has ended (nvidia-smi lists it; 'nvidia-smi -q -d COMPUTE' "
        "shows the mode), or have an administrator set the default mode (nvidia-smi -c DEFAULT)",
        ExitCode::unavailable};
}

Diagnosis oom_diagnosis(const DriverApi& api, const DiagnosisContext& c) {
    const std::string asked = c.size ? fmt::format("; {} were asked for", format_size(*c.size)) : std::string();
    const bool host = c.prop && !is_device_memory(c.prop->location);
    if (host) {
        struct sysinfo si {};
        const std::string free = sysinfo(&si) == 0 ? format_size(static_cast<std::uint64_t>(si.freeram) * si.mem_unit)
                                                   : std::string("an unknown amount");
        return Diagnosis{fmt::format("the host has {} of memory free{}", free, asked),
                         "ask for less, or free host memory", ExitCode::failed};
    }
    std::string cause = fmt::format("device {}'s free memory is unknown{}", device_of(c), asked);
    CUcontext ctx = nullptr;
    if (api.cuCtxGetCurrent != nullptr && api.cuMemGetInfo != nullptr && api.cuCtxGetCurrent(&ctx) == CUDA_SUCCESS &&
        ctx != nullptr) {
        std::size_t free = 0, total = 0;
        if (api.cuMemGetInfo(&free, &total) == CUDA_SUCCESS) {
            cause = fmt::format("device {} has {} free of {}{}", device_of(c), format_size(free), format_size(total),
                                asked);
        }
    }
    return Diagnosis{cause,
                     "ask for at most the free memory, or end the processes that hold it (nvidia-smi lists them)",
                     ExitCode::failed};
}

// RDMA-capable localized memory on a device whose GPUDirect RDMA does not work with localized memory
// (CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_LOCALIZED_MEMORY_SUPPORTED 0) needs the RDMA-over-PCIe usage.
std::optional<Diagnosis> localized_rdma_diagnosis(const DriverApi& api, const DiagnosisContext& c) {
    if (!c.prop || !is_localized(c.prop->location) || c.prop->allocFlags.gpuDirectRDMACapable == 0 ||
        (c.prop->allocFlags.usage & locality::kUsageRdmaOverPcie) != 0) {
        return std::nullopt;
    }
    const auto works = read_attribute(api, device_of(c), locality::kAttrRdmaWithLocalized);
    if (works && *works != 0) return std::nullopt;
    return Diagnosis{
        fmt::format("device {}'s GPUDirect RDMA does not work with localized memory "
                    "(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_LOCALIZED_MEMORY_SUPPORTED {}: {})",
                    device_of(c), locality::kAttrRdmaWithLocalized, works ? std::to_string(*works) : "unknown"),
        "ask for GPUDirect RDMA over PCIe as well (CU_MEM_CREATE_USAGE_GPU_DIRECT_RDMA_OVER_PCIE), or "
        "for location device",
        ExitCode::unavailable};
}

std::optional<Diagnosis> invalid_value_diagnosis(const DriverApi& api, const DiagnosisContext& c) {
    if (c.size && c.granularity && *c.granularity > 0 && *c.size % *c.granularity != 0) {
        return size_diagnosis(*c.size, *c.granularity);
    }
    if (!c.prop) return std::nullopt;
    const CUmemAllocationProp& p = *c.prop;
    if (p.location.type == CU_MEM_LOCATION_TYPE_HOST && p.requestedHandleTypes != CU_MEM_HANDLE_TYPE_NONE) {
        return Diagnosis{fmt::format("host allocations cannot be shared: the driver takes only handle type none "
                                     "with location host, not {}",
                                     handle_type_name(p.requestedHandleTypes)),
                         "ask for handle type none with location host, or for location host-numa to share host memory",
                         ExitCode::usage};
    }
    if (!is_device_memory(p.location)) {
        if (auto missing = missing_attribute(api, c)) return missing;
    }
    if (p.location.type == CU_MEM_LOCATION_TYPE_HOST_NUMA) {
        const auto nearest = read_attribute(api, device_of(c), CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID);
        if (nearest && *nearest != p.location.id) {
            return Diagnosis{fmt::format("the driver refused host NUMA node {}: it may not exist (device {}'s "
                                         "nearest node is {})",
                                         p.location.id, device_of(c), *nearest),
                             fmt::format("ask for location host-numa (node {}) or a node that exists", *nearest),
                             ExitCode::unavailable};
        }
    }
    return Diagnosis{.cause = fmt::format("the driver rejected this combination of properties: {}", describe_prop(p)),
                     .remedy = kRefusedPropertiesRemedy,
                     .exit_code = ExitCode::failed,
                     .remedy_changes_request = true};
}

}  // namespace

Diagnosis size_diagnosis(std::uint64_t size, std::uint64_t granularity) {
    const NearestSizes n = nearest_valid_sizes(size, granularity);
    const auto [lower, upper] = format_sizes_apart(n.lower, n.upper);
    return Diagnosis{fmt::format("{} bytes is not a multiple of the granularity {} ({} bytes); the nearest valid "
                                 "sizes are {} ({} bytes) and {} ({} bytes)",
                                 size, format_size(granularity), granularity, lower, n.lower, upper, n.upper),
                     "give one of those sizes", ExitCode::usage, SizeMismatch{size, granularity, n}};
}

Problem size_mismatch_problem(const SizeMismatch& m) {
    const Diagnosis d = size_diagnosis(m.size, m.granularity);
    return Problem{.exit_code = ExitCode::usage,
                   .message = fmt::format("size {} is not a multiple of the allocation granularity {}", m.size,
                                          format_size(m.granularity)),
                   .cause = d.cause,
                   .remedy = d.remedy};
}

NearestSizes nearest_valid_sizes(std::uint64_t size, std::uint64_t granularity) {
    NearestSizes n;
    n.lower = round_down(size, granularity);
    const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
    if (n.lower == 0) {
        n.lower = granularity;
        n.upper = granularity <= max / 2 ? 2 * granularity : granularity;
    } else if (n.lower <= max - granularity) {
        n.upper = n.lower + granularity;
    } else {
        n.upper = n.lower;
        n.lower -= granularity;
    }
    return n;
}

std::optional<Diagnosis> diagnose(const DriverApi& api, const DriverFailure& failure, const DiagnosisContext& c) {
    const bool fabric = (handle_types_of(c) & CU_MEM_HANDLE_TYPE_FABRIC) != 0;
    switch (static_cast<CUresult>(failure.code)) {
        case CUDA_ERROR_NOT_PERMITTED:
            if (fabric) return imex_diagnosis(c);
            return std::nullopt;
        case CUDA_ERROR_NOT_SUPPORTED:
            if (auto missing = missing_attribute(api, c)) return missing;
            if (auto rdma = localized_rdma_diagnosis(api, c)) return rdma;
            if (!c.prop) return std::nullopt;
            return Diagnosis{.cause = fmt::format("every device attribute for this request is 1, yet the driver "
                                                  "does not support it: {}",
                                                  describe_prop(*c.prop)),
                             .remedy = kRefusedPropertiesRemedy,
                             .exit_code = ExitCode::unavailable,
                             .remedy_changes_request = true};
        case CUDA_ERROR_OUT_OF_MEMORY:
            if (address_space_exhausted(failure)) {
                return Diagnosis{
                    fmt::format("cuMemAddressReserve found no free virtual address range{} in this "
                                "process: its address space is exhausted, not device {}'s memory",
                                c.size ? fmt::format(" of {}", format_size(*c.size)) : std::string(), device_of(c)),
                    kAddressSpaceRemedy, ExitCode::failed};
            }
            if (context_call(failure)) {
                return Diagnosis{fmt::format("device {} has no memory left for a context: other processes hold it; "
                                             "nothing was allocated on it",
                                             device_of(c)),
                                 "run this again when the processes that hold the device's memory have ended or "
                                 "freed it (nvidia-smi lists them)",
                                 ExitCode::failed};
            }
            return oom_diagnosis(api, c);
        case CUDA_ERROR_DEVICE_UNAVAILABLE:
            return unavailable_diagnosis(api, c);
        case CUDA_ERROR_INVALID_VALUE:
            return invalid_value_diagnosis(api, c);
        case CUDA_ERROR_SYSTEM_NOT_READY:
        case CUDA_ERROR_ILLEGAL_STATE:
            if (!fabric) return std::nullopt;
            return Diagnosis{"the fabric software is not initialised or not running",
                             "check the NVIDIA fabric manager and IMEX services (systemctl status nvidia-imex "
                             "nvidia-fabricmanager)",
                             ExitCode::unavailable};
        default:
            return std::nullopt;
    }
}

std::string remedy_by_result(const DriverFailure& failure) {
    switch (static_cast<CUresult>(failure.code)) {
        case CUDA_ERROR_OUT_OF_MEMORY:
            if (address_space_exhausted(failure)) return kAddressSpaceRemedy;
            return "the device has no memory left for this: end the processes that hold it (nvidia-smi lists them)";
        case CUDA_ERROR_DEVICE_UNAVAILABLE:
            return "the device is busy in exclusive-process mode or prohibited: see nvidia-smi -q -d COMPUTE";
        case CUDA_ERROR_NOT_PERMITTED:
            return "run it as a user that may use this resource (see the reason)";
        case CUDA_ERROR_ECC_UNCORRECTABLE:
        case CUDA_ERROR_HARDWARE_STACK_ERROR:
            return "the GPU reports a hardware error: drain the node and reset the GPU (nvidia-smi -r)";
        default:
            return fmt::format(
                "the driver refused {}; run it again, and if it fails again check the driver and the GPU "
                "(nvidia-smi, dmesg)",
                failure.call);
    }
}

void diagnose_problem(const DriverApi& api, Problem& problem, const DiagnosisContext& context) {
    if (!problem.driver) return;
    if (context.device >= 0 && !problem.device) problem.device = context.device;
    const auto d = diagnose(api, *problem.driver, context);
    if (!d) {
        if (problem.remedy.empty()) problem.remedy = remedy_by_result(*problem.driver);
        return;
    }
    problem.cause = d->cause;
    problem.remedy = d->remedy;
    problem.exit_code = d->exit_code;
    problem.remedy_changes_request = d->remedy_changes_request;
}

}  // namespace cumemctl::gpu
