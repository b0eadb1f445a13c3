#include "gpu/le/logical_endpoint_words.hpp"

#include <utility>

#include "base/property_words.hpp"

namespace cumemctl::gpu {
namespace {

constexpr PropertyWords<LeProperty> kLeWords[] = {
    {LeProperty::endpoint_size, "endpoint_size", "endpoint size"},
    {LeProperty::offset, "offset", "endpoint offset"},
    {LeProperty::mem_offset, "mem_offset", "memory offset"},
    {LeProperty::bind_size, "bind_size", "bind size"},
    {LeProperty::location, "location", "location"},
    {LeProperty::handle_type, "handle_type", "handle type"},
    {LeProperty::counted_ops, "counted_ops", "counted operations"},
    {LeProperty::by_address, "by_address", "binding by address"},
    {LeProperty::limits_only, "limits_only", "a limits-only run"},
    {LeProperty::timeout, "timeout", "construction timeout"},
    {LeProperty::devices, "devices", "an owner device or a team"},
};

}  // namespace

std::string le_property_words(LeProperty property) {
    return std::string(property_entry(kLeWords, property).words);
}

std::string le_placeholder(LeProperty property) {
    return property_placeholder(kLeWords, property);
}

std::string le_remedy(std::string_view remedy, LeNames names) {
    return fill_properties(remedy, kLeWords, names);
}

LeError::LeError(Problem problem) : PropertyError(std::move(problem), le_remedy, le_property_words) {}

}  // namespace cumemctl::gpu
