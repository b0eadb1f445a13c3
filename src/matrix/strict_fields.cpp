#include "matrix/strict_fields.hpp"

#include <algorithm>

#include "util/json_cursor.hpp"

namespace cumemctl::matrix {
namespace {

// Runs `read` over a cursor on `text`, its nesting at most kMaxNesting; text that is not JSON, or holds
// more than one value, is Error naming `what`.
template <class Read>
void read_text(std::string_view text, const std::string& what, Read read) {
    try {
        JsonCursor c(text, kMaxNesting);
        read(c);
        const std::string_view rest = text.substr(c.offset());
        if (!std::all_of(rest.begin(), rest.end(), is_json_space)) invalid(fmt::format("{} is not JSON", what));
    } catch (const JsonSyntaxError& e) {
        invalid(fmt::format("{} is not JSON: {} at byte {}", what, e.what(), e.offset));
    } catch (const JsonIncomplete&) {
        invalid(fmt::format("{} is not JSON: it ends inside a value", what));
    } catch (const JsonTypeError& e) {
        invalid(fmt::format("{}: {}", what, e.what()));
    }
}

}  // namespace

std::vector<FieldText> object_fields(std::string_view text, const std::string& what) {
    std::vector<FieldText> fields;
    read_text(text, what, [&](JsonCursor& c) {
        if (c.peek() != JsonCursor::Type::object) invalid(fmt::format("{} is not a JSON object", what));
        c.begin_object();
        std::string key;
        while (c.next_key(key)) {
            if (fields.size() == kMaxFields) invalid(fmt::format("{} has more than {} fields", what, kMaxFields));
            if (std::any_of(fields.begin(), fields.end(), [&](const FieldText& f) { return f.key == key; }))
                invalid(fmt::format("{} gives '{}' twice", what, key));
            fields.push_back({key, c.raw_value()});
        }
    });
    return fields;
}

std::optional<std::string_view> field_text(const std::vector<FieldText>& fields, std::string_view key) {
    const auto f = std::find_if(fields.begin(), fields.end(), [&](const FieldText& each) { return each.key == key; });
    if (f == fields.end()) return std::nullopt;
    return f->text;
}

void for_each_item(std::string_view text, const std::string& what, std::size_t most,
                   const std::function<void(std::string_view, std::size_t)>& item) {
    read_text(text, what, [&](JsonCursor& c) {
        if (c.peek() != JsonCursor::Type::array) invalid(fmt::format("{}: not a list", what));
        c.begin_array();
        for (std::size_t i = 0; c.next_item(); ++i) {
            if (i == most) invalid(fmt::format("{}: more than {} items", what, most));
            item(c.raw_value(), i);
        }
    });
}

nlohmann::json field_tree(std::string_view text, const std::string& what) {
    if (text.size() > kMaxFieldBytes)
        invalid(fmt::format("{} is {} bytes of JSON, more than the {} such a field may have", what, text.size(),
                            kMaxFieldBytes));
    try {
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception&) {
        invalid(fmt::format("{} is not JSON", what));
    }
}

nlohmann::json record_tree(std::string_view text, const std::string& what) {
    // A list or object is held to the nesting limit before it is built (a number alone at the end of
    // the text would read as incomplete to the cursor).
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first != std::string_view::npos && (text[first] == '{' || text[first] == '['))
        read_text(text, what, [](JsonCursor& c) { c.skip(); });
    return field_tree(text, what);
}

const nlohmann::json& StrictFields::at(const std::string& key) {
    seen_.insert(key);
    if (tree_ != nullptr) {
        const auto it = tree_->find(key);
        if (it == tree_->end()) invalid(fmt::format("{} has no '{}'", what_, key));
        return *it;
    }
    if (const auto built = built_.find(key); built != built_.end()) return built->second;
    const auto field = field_text(fields_, key);
    if (!field) invalid(fmt::format("{} has no '{}'", what_, key));
    return built_.emplace(key, field_tree(*field, fmt::format("{}'s '{}'", what_, key))).first->second;
}

std::string_view StrictFields::list(const std::string& key) {
    seen_.insert(key);
    const auto field = field_text(fields_, key);
    if (tree_ != nullptr || !field) invalid(fmt::format("{} has no '{}'", what_, key));
    return *field;
}

bool StrictFields::has(const std::string& key) const {
    if (tree_ != nullptr) return tree_->contains(key) && !tree_->at(key).is_null();
    const auto field = field_text(fields_, key);
    return field && *field != "null";
}

void StrictFields::done() const {
    const auto refuse = [&](const std::string& key) {
        if (!seen_.contains(key)) invalid(fmt::format("{} has an unknown field '{}'", what_, key));
    };
    if (tree_ != nullptr) {
        for (const auto& [key, value] : tree_->items()) refuse(key);
    } else {
        for (const auto& f : fields_) refuse(f.key);
    }
}

}  // namespace cumemctl::matrix
