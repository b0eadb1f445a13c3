#include "gpu/le/logical_endpoint_words.hpp"

#include <array>
#include <optional>
#include <utility>

namespace cumemctl::gpu {
namespace {

struct LeWordsEntry {
    LeProperty property;
    std::string_view key;    // the placeholder without its braces
    std::string_view words;  // the core's words
};

constexpr std::array<LeWordsEntry, 11> kLeWordsEntries{{
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
}};

const LeWordsEntry& le_words_entry(LeProperty property) {
    for (const LeWordsEntry& e : kLeWordsEntries) {
        if (e.property == property) return e;
    }
    return kLeWordsEntries.front();  // unreachable: every property has an entry
}

std::optional<LeProperty> le_property_of(std::string_view key) {
    for (const LeWordsEntry& e : kLeWordsEntries) {
        if (e.key == key) return e.property;
    }
    return std::nullopt;
}

}  // namespace

std::string le_property_words(LeProperty property) {
    return std::string(le_words_entry(property).words);
}

std::string le_placeholder(LeProperty property) {
    return "{" + std::string(le_words_entry(property).key) + "}";
}

std::string le_remedy(std::string_view remedy, LeNames names) {
    std::string out;
    std::size_t at = 0;
    while (at < remedy.size()) {
        const std::size_t open = remedy.find('{', at);
        const std::size_t close = open == std::string_view::npos ? open : remedy.find('}', open);
        if (close == std::string_view::npos) break;
        out.append(remedy.substr(at, open - at));
        if (const auto p = le_property_of(remedy.substr(open + 1, close - open - 1))) {
            out += names(*p);
            at = close + 1;
        } else {
            out += '{';
            at = open + 1;
        }
    }
    out.append(remedy.substr(at));
    return out;
}

namespace {

Problem le_in_core_words(Problem problem) {
    problem.remedy = le_remedy(problem.remedy);
    return problem;
}

}  // namespace

LeError::LeError(Problem problem) : Error(le_in_core_words(problem)), remedy_(std::move(problem.remedy)) {}

Problem LeError::in_words(LeNames names) const {
    Problem p = problem();
    p.remedy = le_remedy(remedy_, names);
    return p;
}

}  // namespace cumemctl::gpu
