#include "gpu/memory_props.hpp"

#include <fmt/format.h>

#include "gpu/devices.hpp"
#include "report/error.hpp"
#include "util/index_list.hpp"

namespace cumemctl {

LocationSpec parse_location(std::string_view text) {
    if (text == "device") return {CU_MEM_LOCATION_TYPE_DEVICE, std::nullopt};
    if (text == "host") return {CU_MEM_LOCATION_TYPE_HOST, std::nullopt};
    if (text == "host-numa") return {CU_MEM_LOCATION_TYPE_HOST_NUMA, std::nullopt};
    constexpr std::string_view prefix = "host-numa:";
    if (text.substr(0, prefix.size()) == prefix) {
        return {CU_MEM_LOCATION_TYPE_HOST_NUMA, parse_index(text.substr(prefix.size()), 1 << 16, "NUMA node")};
    }
    throw Error(ExitCode::usage, fmt::format("invalid location '{}'", text),
                "give device, host, host-numa (the node closest to the device) or host-numa:N");
}

CUmemLocation resolve_location(const DriverApi& api, const LocationSpec& spec, int device) {
    CUmemLocation loc{};
    loc.type = spec.type;
    if (spec.type == CU_MEM_LOCATION_TYPE_DEVICE) {
        loc.id = device;
    } else if (spec.type == CU_MEM_LOCATION_TYPE_HOST_NUMA) {
        if (spec.numa_node) {
            loc.id = *spec.numa_node;
        } else {
            const auto id = device_attribute(api, device, CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID);
            if (!id || *id < 0) {
                throw Error(ExitCode::unavailable,
                            fmt::format("device {} has no host NUMA node (CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID is {})",
                                        device, id ? std::to_string(*id) : "unknown to this driver"),
                            "use --location host, or name a node with --location host-numa:N");
            }
            loc.id = *id;
        }
    }
    return loc;
}

std::string location_name(const CUmemLocation& location) {
    switch (location.type) {
        case CU_MEM_LOCATION_TYPE_DEVICE: return "device";
        case CU_MEM_LOCATION_TYPE_HOST: return "host";
        case CU_MEM_LOCATION_TYPE_HOST_NUMA: return fmt::format("host-numa:{}", location.id);
        case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT: return "host-numa-current";
        default: return fmt::format("location-type-{}", static_cast<int>(location.type));
    }
}

CUmemAllocationHandleType parse_handle_type(std::string_view text) {
    if (text == "none") return CU_MEM_HANDLE_TYPE_NONE;
    if (text == "posix-fd") return CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    if (text == "fabric") return CU_MEM_HANDLE_TYPE_FABRIC;
    throw Error(ExitCode::usage, fmt::format("invalid handle type '{}'", text), "give none, posix-fd or fabric");
}

std::string handle_type_name(unsigned int mask) {
    if (mask == 0) return "none";
    const auto names = handle_type_names(static_cast<int>(mask));
    return fmt::format("{}", fmt::join(names, ","));
}

CUmemAllocationProp allocation_prop(const DriverApi& api, const MemoryRequest& request, int device) {
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location = resolve_location(api, request.location, device);
    prop.requestedHandleTypes = request.handle_type;
    prop.allocFlags.compressionType =
        request.compression ? static_cast<unsigned char>(CU_MEM_ALLOCATION_COMP_GENERIC) : 0;
    prop.allocFlags.gpuDirectRDMACapable = request.rdma ? 1 : 0;
    prop.allocFlags.usage = request.tile_pool ? CU_MEM_CREATE_USAGE_TILE_POOL : 0;
    return prop;
}

}  // namespace cumemctl
