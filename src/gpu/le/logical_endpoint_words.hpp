// How the logical endpoint core names the properties of a request in what it tells people. The core
// never spells a command's option: each text is formatted, where it is made, with the names of the
// request (LeBindRequest::names), the core's own words by default ("use a smaller endpoint size"), a
// command's options where it sets them (le-bind: "use a smaller --size").
#pragma once

#include <string>

namespace cumemctl::gpu {

// The properties of a logical endpoint request that a text may tell the user to change.
enum class LeProperty {
    endpoint_size,  // CUlogicalEndpointProp.size, the bytes bindable per device
    offset,         // where in the endpoint a binding starts
    mem_offset,     // where in the allocation a binding starts
    bind_size,      // the bytes a binding covers
    location,       // where the bound memory lives: device, host-numa, host-numa:N
    handle_type,    // none or fabric (an exportable endpoint and memory)
    counted_ops,    // CU_LOGICAL_ENDPOINT_FLAG_COUNTED_OPS
    by_address,     // binding a mapped address (cuLogicalEndpointBindAddr) rather than a handle
    limits_only,    // asking the limits and changing nothing
    timeout,        // how long to wait for construction
    devices,        // the owner device (unicast) or the team (multicast)
};

// What each property is called for the person who reads a text: by default the core's words, what
// doctor and the diagnosis say; a command sets the options that set them.
struct LeNames {
    std::string endpoint_size = "endpoint size";
    std::string offset = "endpoint offset";
    std::string mem_offset = "memory offset";
    std::string bind_size = "bind size";
    std::string location = "location";
    std::string handle_type = "handle type";
    std::string counted_ops = "counted operations";
    std::string by_address = "binding by address";
    std::string limits_only = "a limits-only run";
    std::string timeout = "construction timeout";
    std::string devices = "an owner device or a team";

    // The name of one property (a nearest valid value names its property so).
    const std::string& of(LeProperty property) const;
};

}  // namespace cumemctl::gpu
