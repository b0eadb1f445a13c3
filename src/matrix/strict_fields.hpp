// The strict reading of a JSON object that another process or node wrote (a rank's card and row, a
// report's matrix): each field is checked for presence, type and range as it is read, and a field that
// is not read can be refused; what is wrong throws Error (failed) naming the field.
//
// Such text is read as text, never built into one tree: an object's fields are found by the pull reader
// (util/json_cursor.hpp), a field becomes a tree only when it is read and only up to kMaxFieldBytes of
// text, and a list (a row's cells, a report's rows) is read an item at a time. What another node writes
// costs memory for what it holds that is read, never for what is refused or left unread.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

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

// The longest text of one field, or of one item of a list, that is built into a tree: a card, a cell,
// a rank's identity, whose texts are at most kMaxText each.
inline constexpr std::size_t kMaxFieldBytes = std::size_t{64} * 1024;
// The most fields an object of these records has (a report's results have 14).
inline constexpr std::size_t kMaxFields = 64;
// The deepest nesting of these records (a problem in a cell in a row in a matrix in a report's results).
inline constexpr int kMaxNesting = 16;

// A field of an object as its text: its name and its JSON text as written.
struct FieldText {
    std::string key;
    std::string_view text;
};

// The fields of the JSON object that is the whole of `text` (whitespace aside), in order, each as its
// text; nothing is built. Throws Error (failed) naming `what` where the text is not JSON, is no object,
// gives a field twice or has more than kMaxFields.
std::vector<FieldText> object_fields(std::string_view text, const std::string& what);
// The text of the field named `key` among `fields`, or none.
std::optional<std::string_view> field_text(const std::vector<FieldText>& fields, std::string_view key);
// Hands each item of the JSON list that is `text` to `item`, as its text, with its place; where the list
// has more than `most` items, throws Error (failed) naming `what` before it reads another. `text` must
// be a list (Error otherwise).
void for_each_item(std::string_view text, const std::string& what, std::size_t most,
                   const std::function<void(std::string_view, std::size_t)>& item);
// The tree of one field's or item's text as object_fields or for_each_item found it (the pull reader
// has held its nesting to kMaxNesting): Error (failed) naming `what` where it is more than
// kMaxFieldBytes or not JSON.
nlohmann::json field_tree(std::string_view text, const std::string& what);
// The same for a whole text that no reader has walked yet (a rendezvous file's card): its nesting is
// held to kMaxNesting first.
nlohmann::json record_tree(std::string_view text, const std::string& what);

// An object's fields, read strictly: each read names the field; keys that are not read are refused by done().
class StrictFields {
public:
    // An object already a tree (an answer of this process's own ranks).
    StrictFields(const nlohmann::json& j, std::string what) : tree_(&j), what_(std::move(what)) {
        if (!j.is_object()) invalid(fmt::format("{} is not a JSON object", what_));
    }
    // An object's text (object_fields): each field becomes a tree when it is read; list() gives one as text.
    StrictFields(std::string_view text, std::string what)
        : fields_(object_fields(text, what)), what_(std::move(what)) {}

    const nlohmann::json& at(const std::string& key);
    // The text of a field that is a list, read item by item (for_each_item); only of an object's text.
    std::string_view list(const std::string& key);
    bool has(const std::string& key) const;
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
    void done() const;

private:
    const nlohmann::json* tree_ = nullptr;                      // a tree in hand, or
    std::vector<FieldText> fields_;                             // the fields of an object's text,
    std::map<std::string, nlohmann::json, std::less<>> built_;  // each as a tree once it is read
    std::string what_;
    std::set<std::string> seen_;
};

}  // namespace cumemctl::matrix
