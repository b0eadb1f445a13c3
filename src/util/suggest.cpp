#include "util/suggest.hpp"

#include <algorithm>
#include <cctype>

namespace cumemctl {
namespace {

char lower(char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

// Edits from a to b (optimal string alignment: a swap of neighbours counts as one), case-insensitive.
std::size_t edit_distance(std::string_view a, std::string_view b) {
    const std::size_t n = a.size(), m = b.size();
    std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1, 0));
    for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
    for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
    for (std::size_t i = 1; i <= n; ++i) {
        for (std::size_t j = 1; j <= m; ++j) {
            const std::size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1])) {
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
            }
        }
    }
    return d[n][m];
}

}  // namespace

std::optional<std::string> closest_name(std::string_view word, const std::vector<std::string>& names) {
    if (word.empty() || std::find(names.begin(), names.end(), word) != names.end()) return std::nullopt;
    // Options are compared without their dashes, so that "--chekcs" is two edits from "--checks", not more.
    auto bare = [](std::string_view s) {
        while (!s.empty() && s.front() == '-') s.remove_prefix(1);
        return s;
    };
    const std::string_view w = bare(word);
    // One letter (-x) is close only to the same letter in the other case (-X): any other is one edit
    // from every one-letter option, and so no guess at all.
    const std::size_t limit = w.size() < 2 ? 0 : std::max<std::size_t>(1, w.size() / 3);
    std::optional<std::string> best;
    std::size_t best_distance = limit + 1;
    for (const auto& name : names) {
        const std::size_t d = edit_distance(w, bare(name));
        if (d < best_distance) best = name, best_distance = d;
    }
    if (best) return best;
    std::vector<std::string> started;
    for (const auto& name : names) {
        if (w.size() >= 3 && bare(name).substr(0, w.size()) == w) started.push_back(name);
    }
    if (started.size() == 1) return started.front();
    return std::nullopt;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& names) {
    const auto name = closest_name(word, names);
    return name ? "; did you mean '" + *name + "'?" : std::string();
}

}  // namespace cumemctl
