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
#include <utility>

#include "base/error.hpp"

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

// `text` with each "{key}" that names a property replaced by names(key), and each "{{" (what literal
// writes for a brace) by one brace; any other text, braces included, is kept as it is.
std::string fill_placeholders(std::string_view text, const PlaceholderNames& names);

// `text` (a path, a line of a file: anything a core did not write itself) for a text with placeholders:
// each "{" doubled, so that filling the placeholders gives `text` back as it was, whatever it holds.
std::string literal(std::string_view text);

// A table's entry for `property` (the first entry where the table lacks it).
template <typename Property, std::size_t N>
const PropertyWords<Property>& property_entry(const PropertyWords<Property> (&table)[N], Property property) {
    for (const auto& e : table) {
        if (e.property == property) return e;
    }
    return table[0];
}

// The placeholder of `property` in `table`: its key in braces ("{offset}").
template <typename Property, std::size_t N>
std::string property_placeholder(const PropertyWords<Property> (&table)[N], Property property) {
    return "{" + std::string(property_entry(table, property).key) + "}";
}

// `problem` with its message, cause and remedy each passed through fill(text).
template <typename Fill>
Problem fill_problem(Problem problem, Fill fill) {
    problem.message = fill(problem.message);
    problem.cause = fill(problem.cause);
    problem.remedy = fill(problem.remedy);
    return problem;
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

// An error of a core whose texts name properties with placeholders: Error's problem is in the core's
// words (what doctor, or any caller without options, shows), and in_words says it as a command does.
// `fill` is the core's filling of its table (`text` with each placeholder named by `names`), `core` its
// own words. Each core derives its error from this (gpu::LeError, imex::ImexError).
template <typename Property>
class PropertyError : public Error {
public:
    using Names = std::string (*)(Property);
    using Fill = std::string (*)(std::string_view text, Names names);

    PropertyError(Problem written, Fill fill, Names core)
        : Error(fill_problem(written, [&](const std::string& text) { return fill(text, core); })),
          written_(std::move(written)),
          fill_(fill),
          core_(core) {}

    // The problem with each property named as `names` does. A text changed since the throw (a caller
    // added a cause) is kept as it is now.
    Problem in_words(Names names) const {
        Problem p = problem();
        const auto reword = [&](std::string& now, const std::string& written) {
            if (now == fill_(written, core_)) now = fill_(written, names);
        };
        reword(p.message, written_.message);
        reword(p.cause, written_.cause);
        reword(p.remedy, written_.remedy);
        return p;
    }

private:
    Problem written_;  // with placeholders
    Fill fill_;
    Names core_;
};

}  // namespace cumemctl
