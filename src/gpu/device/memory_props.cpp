#include "gpu/device/memory_props.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "gpu/device/devices.hpp"
#include "gpu/device/locality.hpp"
#include "base/enum_words.hpp"
#include "base/error.hpp"
#include "util/index_list.hpp"
#include "util/comma_list.hpp"

namespace cumemctl::gpu {
namespace {

// Splits "a,b,c" into its items; an empty item is a usage error naming `what`.
std::vector<std::string_view> split_list(std::string_view text, std::string_view what, std::string_view remedy) {
    std::vector<std::string_view> items = split_commas(text);
    for (const std::string_view item : items) {
        if (item.empty())
            throw Error(ExitCode::usage, fmt::format("invalid {} list '{}'", what, text), std::string(remedy));
    }
    return items;
}

bool same_spec(const LocationSpec& a, const LocationSpec& b) {
    return a.type == b.type && a.numa_node == b.numa_node && a.domain == b.domain;
}

// The location types whose word is the type's alone; a NUMA node's and a domain's carry their number.
constexpr auto kLocationWords =
    enum_words<CUmemLocationType>({{CU_MEM_LOCATION_TYPE_DEVICE, "device"},
                                   {CU_MEM_LOCATION_TYPE_HOST, "host"},
                                   {CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, "host-numa-current"}},
                                  "host-numa");

}  // namespace

LocationSpec parse_location(std::string_view text) {
    if (text == "device") return {CU_MEM_LOCATION_TYPE_DEVICE, std::nullopt, std::nullopt};
    if (text == "host") return {CU_MEM_LOCATION_TYPE_HOST, std::nullopt, std::nullopt};
    if (text == "host-numa") return {CU_MEM_LOCATION_TYPE_HOST_NUMA, std::nullopt, std::nullopt};
    constexpr std::string_view prefix = "host-numa:";
    if (text.substr(0, prefix.size()) == prefix) {
        return {CU_MEM_LOCATION_TYPE_HOST_NUMA, parse_index(text.substr(prefix.size()), 1 << 16, "NUMA node"),
                std::nullopt};
    }
    constexpr std::string_view domain = "domain:";
    if (text.substr(0, domain.size()) == domain) {
        return {static_cast<CUmemLocationType>(locality::kLocationType), std::nullopt,
                parse_index(text.substr(domain.size()), locality::kMaxId + 1, "locality domain")};
    }
    throw Error(ExitCode::usage, fmt::format("invalid location '{}'", text),
                "give device, host, host-numa (the node closest to the device), host-numa:N or domain:I (a "
                "locality domain of the device, CUDA 13.4)");
}

std::vector<LocationSpec> parse_location_list(std::string_view text) {
    if (text == "all") {
        return {{CU_MEM_LOCATION_TYPE_DEVICE, std::nullopt, std::nullopt},
                {CU_MEM_LOCATION_TYPE_HOST, std::nullopt, std::nullopt},
                {CU_MEM_LOCATION_TYPE_HOST_NUMA, std::nullopt, std::nullopt}};
    }
    std::vector<LocationSpec> out;
    for (std::string_view item :
         split_list(text, "location", "give locations separated by commas: device,host,host-numa:1")) {
        const LocationSpec spec = parse_location(item);
        if (std::none_of(out.begin(), out.end(), [&](const LocationSpec& s) { return same_spec(s, spec); })) {
            out.push_back(spec);
        }
    }
    return out;
}

std::string location_spec_name(const LocationSpec& spec) {
    if (spec.domain) return fmt::format("domain:{}", *spec.domain);
    if (spec.type == CU_MEM_LOCATION_TYPE_DEVICE || spec.type == CU_MEM_LOCATION_TYPE_HOST) {
        return std::string(kLocationWords.word(spec.type));
    }
    return spec.numa_node ? fmt::format("host-numa:{}", *spec.numa_node) : "host-numa";
}

CUmemLocation resolve_location(const DriverApi& api, const LocationSpec& spec, int device) {
    if (spec.domain) return localized_location(api, device, *spec.domain);
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
                            "ask for location host, or name a node (location host-numa:N)");
            }
            loc.id = *id;
        }
    }
    return loc;
}

std::string location_name(const CUmemLocation& location) {
    if (is_localized(location)) return fmt::format("domain:{}", location_domain(location));
    if (location.type == CU_MEM_LOCATION_TYPE_HOST_NUMA) return fmt::format("host-numa:{}", location.id);
    if (const std::optional<std::string_view> word = kLocationWords.find(location.type)) return std::string(*word);
    return fmt::format("location-type-{}", static_cast<int>(location.type));
}

CUmemAllocationHandleType parse_handle_type(std::string_view text) {
    if (text == "none") return CU_MEM_HANDLE_TYPE_NONE;
    if (text == "posix-fd") return CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    if (text == "fabric") return CU_MEM_HANDLE_TYPE_FABRIC;
    throw Error(ExitCode::usage, fmt::format("invalid handle type '{}'", text), "give none, posix-fd or fabric");
}

std::vector<CUmemAllocationHandleType> parse_handle_type_list(std::string_view text) {
    if (text == "all") {
        return {CU_MEM_HANDLE_TYPE_NONE, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, CU_MEM_HANDLE_TYPE_FABRIC};
    }
    std::vector<CUmemAllocationHandleType> out;
    for (std::string_view item :
         split_list(text, "handle type", "give handle types separated by commas: none,posix-fd,fabric")) {
        const CUmemAllocationHandleType type = parse_handle_type(item);
        if (std::find(out.begin(), out.end(), type) == out.end()) out.push_back(type);
    }
    return out;
}

std::string handle_type_name(unsigned int mask) {
    if (mask == 0) return "none";
    const auto names = handle_type_names(static_cast<int>(mask));
    return fmt::format("{}", fmt::join(names, ","));
}

std::vector<std::string> flag_names(const MemoryRequest& request) {
    std::vector<std::string> names;
    if (request.compression) names.emplace_back("compression");
    if (request.rdma) names.emplace_back("rdma");
    if (request.tile_pool) names.emplace_back("tile-pool");
    if (request.rdma_over_pcie) names.emplace_back("rdma-over-pcie");
    return names;
}

std::vector<std::string> flag_names(const CUmemAllocationProp& prop) {
    MemoryRequest r;
    r.compression = prop.allocFlags.compressionType == CU_MEM_ALLOCATION_COMP_GENERIC;
    r.rdma = prop.allocFlags.gpuDirectRDMACapable != 0;
    r.tile_pool = (prop.allocFlags.usage & CU_MEM_CREATE_USAGE_TILE_POOL) != 0;
    r.rdma_over_pcie = (prop.allocFlags.usage & locality::kUsageRdmaOverPcie) != 0;
    return flag_names(r);
}

std::string describe_prop(const CUmemAllocationProp& prop) {
    const std::string where =
        prop.location.type == CU_MEM_LOCATION_TYPE_DEVICE ? fmt::format("device {}", prop.location.id)
        : is_localized(prop.location) ? fmt::format("device {} locality domain {}", location_device(prop.location),
                                                    location_domain(prop.location))
                                      : location_name(prop.location);
    const auto flags = flag_names(prop);
    return fmt::format("location {}, handle type {}, flags {}", where, handle_type_name(prop.requestedHandleTypes),
                       flags.empty() ? std::string("none") : fmt::format("{}", fmt::join(flags, "+")));
}

CUmemAllocationProp allocation_prop(const DriverApi& api, const MemoryRequest& request, int device) {
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location = resolve_location(api, request.location, device);
    prop.requestedHandleTypes = request.handle_type;
    prop.allocFlags.compressionType =
        request.compression ? static_cast<unsigned char>(CU_MEM_ALLOCATION_COMP_GENERIC) : 0;
    prop.allocFlags.gpuDirectRDMACapable = request.rdma ? 1 : 0;
    prop.allocFlags.usage = static_cast<unsigned short>((request.tile_pool ? CU_MEM_CREATE_USAGE_TILE_POOL : 0) |
                                                        (request.rdma_over_pcie ? locality::kUsageRdmaOverPcie : 0));
    return prop;
}

}  // namespace cumemctl::gpu
