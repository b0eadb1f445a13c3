// The memory properties people choose on the command line (location, handle type, compression, RDMA,
// tile pool) and their driver form (CUmemLocation, CUmemAllocationProp, handle type bits).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cuda/driver_api.hpp"

namespace cumemctl::gpu {

// A location as typed: device, host, host-numa with an optional node (defaulting to the device's), or
// one locality domain of the device (CUDA 13.4: CU_MEM_LOCATION_TYPE_DEVICE_LOCALITY_DOMAIN).
struct LocationSpec {
    CUmemLocationType type = CU_MEM_LOCATION_TYPE_DEVICE;
    std::optional<int> numa_node;  // only for host-numa
    std::optional<int> domain;     // only for domain:I (type locality::kLocationType)
};

// Parses "device", "host", "host-numa", "host-numa:N" or "domain:I" (I from 0 to 255); throws a usage
// error otherwise.
LocationSpec parse_location(std::string_view text);

// Parses a comma-separated list of locations ("device,host-numa:1"); "all" is device, host, host-numa.
// Repeats are dropped; anything else is a usage error.
std::vector<LocationSpec> parse_location_list(std::string_view text);

// A spec as typed: "device", "host", "host-numa", "host-numa:N" or "domain:I".
std::string location_spec_name(const LocationSpec& spec);

// The driver location for a spec on a device: device -> the device; host -> host; host-numa -> the
// given node or the device's CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID; domain:I -> localized_location (checked
// against the driver and the domain count before anything is made). Throws "unavailable" when the
// device has no host NUMA node (-1 or unknown).
CUmemLocation resolve_location(const DriverApi& api, const LocationSpec& spec, int device);

// "device", "host", "host-numa:N", "domain:I" for reports (a location read back from the driver is
// decoded by its type: a localized id is device + 256 x domain).
std::string location_name(const CUmemLocation& location);

// Parses "none", "posix-fd" or "fabric"; throws a usage error otherwise.
CUmemAllocationHandleType parse_handle_type(std::string_view text);

// Parses a comma-separated list of handle types; "all" is none, posix-fd, fabric. Repeats are dropped.
std::vector<CUmemAllocationHandleType> parse_handle_type_list(std::string_view text);

// "none", "posix-fd", "fabric" (or a comma-separated list for a mask).
std::string handle_type_name(unsigned int mask);

// What a user asks of an allocation, as flags on top of location and handle type.
struct MemoryRequest {
    LocationSpec location;
    CUmemAllocationHandleType handle_type = CU_MEM_HANDLE_TYPE_NONE;
    bool compression = false;  // CU_MEM_ALLOCATION_COMP_GENERIC
    bool rdma = false;         // allocFlags.gpuDirectRDMACapable
    bool tile_pool = false;    // allocFlags.usage |= CU_MEM_CREATE_USAGE_TILE_POOL
    // allocFlags.usage |= CU_MEM_CREATE_USAGE_GPU_DIRECT_RDMA_OVER_PCIE (13.4): what RDMA-capable
    // localized memory needs where the device's RDMA does not work with localized memory
    bool rdma_over_pcie = false;
};

// The flags a request sets, as named on the command line: "compression", "rdma", "tile-pool",
// "rdma-over-pcie".
std::vector<std::string> flag_names(const MemoryRequest& request);

// The flags a property set carries, named as flag_names does.
std::vector<std::string> flag_names(const CUmemAllocationProp& prop);

// A property set in words, for messages: "location device 0, handle type fabric, flags compression".
std::string describe_prop(const CUmemAllocationProp& prop);

// The CUmemAllocationProp of a request on a device (pinned memory).
CUmemAllocationProp allocation_prop(const DriverApi& api, const MemoryRequest& request, int device);

}  // namespace cumemctl::gpu
