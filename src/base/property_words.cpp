#include "base/property_words.hpp"

namespace cumemctl {

std::string fill_placeholders(std::string_view text, const PlaceholderNames& names) {
    std::string out;
    std::size_t at = 0;
    while (at < text.size()) {
        const std::size_t open = text.find('{', at);
        if (open == std::string_view::npos) break;
        out.append(text.substr(at, open - at));
        at = open + 1;
        if (text.substr(open, 2) == "{{") {
            ++at;
        } else if (const std::size_t close = text.find('}', open); close != std::string_view::npos) {
            if (const auto name = names(text.substr(open + 1, close - open - 1))) {
                out += *name;
                at = close + 1;
                continue;
            }
        }
        out += '{';
    }
    out.append(text.substr(at));
    return out;
}

std::string literal(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        out += c;
        if (c == '{') out += '{';
    }
    return out;
}

}  // namespace cumemctl
