#include "base/property_words.hpp"

namespace cumemctl {

std::string fill_placeholders(std::string_view text, const PlaceholderNames& names) {
    std::string out;
    std::size_t at = 0;
    while (at < text.size()) {
        const std::size_t open = text.find('{', at);
        const std::size_t close = open == std::string_view::npos ? open : text.find('}', open);
        if (close == std::string_view::npos) break;
        out.append(text.substr(at, open - at));
        if (const auto name = names(text.substr(open + 1, close - open - 1))) {
            out += *name;
            at = close + 1;
        } else {
            out += '{';
            at = open + 1;
        }
    }
    out.append(text.substr(at));
    return out;
}

}  // namespace cumemctl
