// The strict reading of a JSON object that another process or node wrote (a rank's card and row, a
// report's matrix): each field is checked for presence, type and range as it is read, and a field that
// is not read can be refused; what is wrong throws Error (failed) naming the field.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "ipc/problem_wire.hpp"

namespace cumemctl::matrix {

// The longest text field a reader takes (a problem's message, a host name).
inline constexpr std::size_t kMaxText = 4096;

[[noreturn]] inline void invalid(const std::string& what) {
    throw Error(ExitCode::failed, what);
}

// An object's fields, read strictly: each read names the field; keys that are not read are refused by done().
class StrictFields {
public:
    StrictFields(const nlohmann::json& j, std::string what) : j_(j), what_(std::move(what)) {
        if (!j_.is_object()) invalid(fmt::format("{} is not a JSON object", what_));
    }
    const nlohmann::json& at(const std::string& key) {
        seen_.insert(key);
        const auto it = j_.find(key);
        if (it == j_.end()) invalid(fmt::format("{} has no '{}'", what_, key));
        return *it;
    }
    bool has(const std::string& key) const { return j_.contains(key) && !j_.at(key).is_null(); }
    std::string text(const std::string& key) {
        const auto& v = at(key);
        if (!v.is_string() || v.get_ref<const std::string&>().size() > kMaxText) {
            invalid(fmt::format("{}: '{}' is not a string of at most {} characters", what_, key, kMaxText));
        }
        return v.get<std::string>();
    }
    // A text that null stands for where there is none.
    std::string text_or_empty(const std::string& key) {
        if (at(key).is_null()) return {};
        return text(key);
    }
    std::int64_t integer(const std::string& key, std::int64_t low, std::int64_t high) {
        const auto& v = at(key);
        if (!v.is_number_integer()) invalid(fmt::format("{}: '{}' is not an integer", what_, key));
        const auto n = v.get<std::int64_t>();
        if (n < low || n > high ||
            (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(high))) {
            invalid(fmt::format("{}: '{}' is outside {}-{}", what_, key, low, high));
        }
        return n;
    }
    std::uint64_t unsigned_integer(const std::string& key) {
        const auto& v = at(key);
        if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0)) {
            invalid(fmt::format("{}: '{}' is not an unsigned integer", what_, key));
        }
        return v.get<std::uint64_t>();
    }
    std::optional<double> number_or_null(const std::string& key) {
        const auto& v = at(key);
        if (v.is_null()) return std::nullopt;
        if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0) {
            invalid(fmt::format("{}: '{}' is not a number of 0 or more", what_, key));
        }
        return v.get<double>();
    }
    std::optional<Problem> problem_or_null(const std::string& key) {
        const auto& v = at(key);
        if (v.is_null()) return std::nullopt;
        Problem out;
        try {
            out = ipc::problem_from_json(v);
        } catch (const nlohmann::json::exception& e) {
            invalid(fmt::format("{}: '{}': {}", what_, key, e.what()));
        }
        for (const std::string* t : {&out.message, &out.cause, &out.remedy}) {
            if (t->size() > kMaxText)
                invalid(fmt::format("{}: '{}' has a text of more than {} characters", what_, key, kMaxText));
        }
        return out;
    }
    void done() const {
        for (const auto& [key, value] : j_.items()) {
            if (!seen_.contains(key)) invalid(fmt::format("{} has an unknown field '{}'", what_, key));
        }
    }

private:
    const nlohmann::json& j_;
    std::string what_;
    std::set<std::string> seen_;
};

}  // namespace cumemctl::matrix
