// How core code names the properties of a request in what it tells people. Core code never spells a
// command's option: a text names a property with a placeholder, the property's key in braces
// ("{offset}", "{proc_devices}"), and is filled with the core's own words for it ("endpoint offset")
// or, by a command, with the option that sets it ("--offset"); doctor keeps the core's words. Each core
// declares its properties and their words in a table (gpu/le/logical_endpoint_words,
// imex/imex_words); the filling is this one.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace cumemctl {

// One property of a core's table: its placeholder key (without the braces) and the core's words.
template <typename Property>
struct PropertyWords {
    Property property;
    std::string_view key;
    std::string_view words;
};

// The name of the property whose placeholder key is `key`; nullopt where `key` is no property's key.
using PlaceholderNames = std::function<std::optional<std::string>(std::string_view key)>;

// `text` with each "{key}" that names a property replaced by names(key); any other text, braces
// included, is kept as it is.
std::string fill_placeholders(std::string_view text, const PlaceholderNames& names);

// A table's entry for `property` (the first entry where the table lacks it).
template <typename Property, std::size_t N>
const PropertyWords<Property>& property_entry(const PropertyWords<Property> (&table)[N], Property property) {
    for (const auto& e : table) {
        if (e.property == property) return e;
    }
    return table[0];
}

// `text` with the placeholder of each property of `table` replaced by names(property).
template <typename Property, std::size_t N, typename Names>
std::string fill_properties(std::string_view text, const PropertyWords<Property> (&table)[N], Names names) {
    return fill_placeholders(text, [&](std::string_view key) -> std::optional<std::string> {
        for (const auto& e : table) {
            if (e.key == key) return std::string(names(e.property));
        }
        return std::nullopt;
    });
}

}  // namespace cumemctl
