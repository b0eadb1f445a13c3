// How the logical endpoint core names the properties of a request in a remedy, with the placeholders
// of base/property_words. The core never spells a command's option: it writes a remedy with a
// placeholder for each property it names ("use a smaller {endpoint_size}") and fills it with its own
// words ("use a smaller endpoint size"); a command that sets the properties with options fills the
// same remedy with them (le-bind: "use a smaller --size").
#pragma once

#include <string>
#include <string_view>

#include "base/error.hpp"
#include "base/property_words.hpp"

namespace cumemctl::gpu {

// The properties of a logical endpoint request that a remedy may tell the user to change. The
// placeholder of each is its name in braces: {endpoint_size}, {offset}, {mem_offset}, {bind_size},
// {location}, {handle_type}, {counted_ops}, {by_address}, {limits_only}, {timeout}, {devices}.
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

// Names a property for the person who reads a remedy.
using LeNames = std::string (*)(LeProperty);

// The core's words for a property: "endpoint size", "endpoint offset", "memory offset", "bind size",
// "location", "handle type", "counted operations", "binding by address", "a limits-only run",
// "construction timeout", "an owner device or a team".
std::string le_property_words(LeProperty property);

// The placeholder of a property in a remedy: "{offset}".
std::string le_placeholder(LeProperty property);

// `remedy` with each property placeholder replaced by names(property); other text, braces included, is
// kept as it is.
std::string le_remedy(std::string_view remedy, LeNames names = le_property_words);

// An error of the logical endpoint core whose remedy (or any of its texts) may hold property
// placeholders (base/property_words: PropertyError).
class LeError : public PropertyError<LeProperty> {
public:
    explicit LeError(Problem problem);
};

}  // namespace cumemctl::gpu
