// Reading a report's results as a renderer does: a field of the given type, or a default where the
// document lacks it or holds another type (a renderer never throws on a report it did not expect).
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

namespace cumemctl {

// The member `key` of `j`, or null where `j` is no object or has none.
inline const nlohmann::json& json_field(const nlohmann::json& j, std::string_view key) {
    static const nlohmann::json null;
    if (!j.is_object()) return null;
    const auto it = j.find(key);
    return it == j.end() ? null : *it;
}

inline std::string json_text(const nlohmann::json& j, std::string_view key, std::string fallback = {}) {
    const nlohmann::json& v = json_field(j, key);
    return v.is_string() ? v.get<std::string>() : std::move(fallback);
}

// A text as a report writes it: null for "none" (an empty text), so that `select(.remedy)` in jq picks
// only what has one.
inline nlohmann::json text_or_null(const std::string& text) {
    return text.empty() ? nlohmann::json(nullptr) : nlohmann::json(text);
}

inline bool json_flag(const nlohmann::json& j, std::string_view key) {
    const nlohmann::json& v = json_field(j, key);
    return v.is_boolean() && v.get<bool>();
}

inline double json_number(const nlohmann::json& j, std::string_view key, double fallback = 0) {
    const nlohmann::json& v = json_field(j, key);
    return v.is_number() ? v.get<double>() : fallback;
}

}  // namespace cumemctl
