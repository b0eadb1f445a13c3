#include "util/hostlist.hpp"
#include "util/comma_list.hpp"

#include "base/error.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace cumemctl {
namespace {

constexpr std::size_t kMaxNames = 1000000;  // the most names one list may expand to

// A name split at its trailing digits: "gpu017" -> ("gpu", 17, 3); "login" -> ("login", -1, 0).
struct Split {
    std::string prefix;
    std::int64_t number = -1;
    std::size_t width = 0;
};

Split split(const std::string& host) {
    std::size_t i = host.size();
    while (i > 0 && host[i - 1] >= '0' && host[i - 1] <= '9') --i;
    const std::size_t width = host.size() - i;
    // 18 digits fit an int64; longer runs are names, not numbers.
    if (width == 0 || width > 18) return {host, -1, 0};
    return {host.substr(0, i), std::stoll(host.substr(i)), width};
}

// The names of one item of a host list (no comma outside brackets): its first bracket group
// multiplied out, and the rest of the name expanded the same way.
void expand_item(std::string_view item, std::string_view what, std::vector<std::string>& out) {
    auto bad = [&](const std::string& why) {
        return Error(ExitCode::usage, fmt::format("invalid {} '{}': {}", what, item, why),
                     "give host names as Slurm writes them: gpu[001-004,007],login1");
    };
    const std::size_t open = item.find('[');
    if (open == std::string_view::npos) {
        if (item.find(']') != std::string_view::npos) throw bad("a ']' without its '['");
        if (item.empty()) throw bad("an empty name");
        out.emplace_back(item);
        return;
    }
    const std::size_t close = item.find(']', open);
    if (close == std::string_view::npos) throw bad("a '[' without its ']'");
    const std::string_view prefix = item.substr(0, open);
    const std::string_view ranges = item.substr(open + 1, close - open - 1);
    std::vector<std::string> rest{""};
    if (close + 1 < item.size()) {
        rest.clear();
        expand_item(item.substr(close + 1), what, rest);
    }
    for (const std::string_view range : split_commas(ranges)) {
        const std::size_t dash = range.find('-');
        const std::string_view lo = range.substr(0, dash);
        const std::string_view hi = dash == std::string_view::npos ? lo : range.substr(dash + 1);
        auto digits = [](std::string_view s) {
            return !s.empty() && s.size() <= 18 &&
                   std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
        };
        if (!digits(lo) || !digits(hi)) throw bad(fmt::format("'{}' is not a number or a range", range));
        const std::int64_t a = std::stoll(std::string(lo)), b = std::stoll(std::string(hi));
        if (b < a) throw bad(fmt::format("the range {} runs backwards", range));
        const auto count = static_cast<std::size_t>(b - a) + 1;  // a range names both its ends
        if (count > kMaxNames || out.size() + count * rest.size() > kMaxNames) {
            throw bad("more than a million names");
        }
        for (std::int64_t n = a; n <= b; ++n) {
            for (const auto& r : rest) out.push_back(fmt::format("{}{:0{}}{}", prefix, n, lo.size(), r));
        }
    }
}

// Slurm's words for many nodes (scontrol update nodename=ALL drains every node) or for none
// (slurm.conf's NodeName=DEFAULT sets defaults): no node can be called so.
constexpr std::array<std::string_view, 2> kSlurmWords{"ALL", "DEFAULT"};

bool same_word(std::string_view a, std::string_view b) {
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    return a.size() == b.size() &&
           std::equal(a.begin(), a.end(), b.begin(), [&](char x, char y) { return lower(x) == lower(y); });
}

}  // namespace

std::string not_single_host(std::string_view name) {
    if (name.empty()) return "an empty name";
    if (name.size() > 255)
        return fmt::format("a name of {} bytes, longer than the 255 a host name may have", name.size());
    for (const std::string_view word : kSlurmWords) {
        if (same_word(name, word))
            return fmt::format("'{}' is Slurm's word for {}", word, word == "ALL" ? "every node" : "no node");
    }
    auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); };
    if (!alnum(name.front())) return "a name that does not start with a letter or a digit";
    const bool plain =
        std::all_of(name.begin(), name.end(), [&](char c) { return alnum(c) || c == '.' || c == '-' || c == '_'; });
    if (!plain)
        return "not one host name: letters, digits, '.', '-' and '_' only (no host list, comma, space, '=' or control "
               "character)";
    return {};
}

bool is_single_host(std::string_view name) {
    return not_single_host(name).empty();
}

std::vector<std::string> expand_hostlist(std::string_view text, std::string_view what) {
    std::vector<std::string> out;
    int depth = 0;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= text.size(); ++i) {
        if (i < text.size() && text[i] == '[') ++depth;
        if (i < text.size() && text[i] == ']') --depth;
        if (i == text.size() || (text[i] == ',' && depth == 0)) {
            const std::size_t first = out.size();
            expand_item(text.substr(start, i - start), what, out);
            if (out.size() > kMaxNames)
                throw Error(ExitCode::usage, fmt::format("invalid {}: more than a million names", what),
                            "give host names as Slurm writes them: gpu[001-004,007],login1");
            // Each whole name one host: never ALL, nor a name with a space or '='.
            for (std::size_t k = first; k < out.size(); ++k) {
                if (const std::string why = not_single_host(out[k]); !why.empty())
                    throw Error(ExitCode::usage, fmt::format("invalid {} '{}': {}", what, out[k], why),
                                "give host names as Slurm writes them: gpu[001-004,007],login1");
            }
            start = i + 1;
        }
    }
    return out;
}

std::string compress_hostlist(std::vector<std::string> hosts) {
    return fmt::format("{}", fmt::join(compress_hostlist_items(std::move(hosts)), ","));
}

namespace {

// The most hosts of one range that Slurm's hostlist parser takes ("Too many hosts in range" past it).
constexpr std::size_t kSlurmMostInRange = 65536;

}  // namespace

std::vector<std::string> compress_hostlist_items(std::vector<std::string> hosts) {
    std::sort(hosts.begin(), hosts.end());
    hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
    // (prefix, width) -> numbers; names without a number stand alone.
    std::map<std::pair<std::string, std::size_t>, std::vector<std::int64_t>> groups;
    std::vector<std::tuple<std::string, std::string, std::size_t>> order;  // first name, prefix, width
    for (const auto& h : hosts) {
        const Split s = split(h);
        if (s.number < 0) {
            order.emplace_back(h, h, 0);
            continue;
        }
        auto& numbers = groups[{s.prefix, s.width}];
        if (numbers.empty()) order.emplace_back(h, s.prefix, s.width);
        numbers.push_back(s.number);
    }
    std::sort(order.begin(), order.end());
    std::vector<std::string> parts;
    for (const auto& [first, prefix, width] : order) {
        const auto it = groups.find({prefix, width});
        if (width == 0 || it == groups.end()) {
            parts.push_back(first);
            continue;
        }
        std::vector<std::int64_t> numbers = it->second;
        std::sort(numbers.begin(), numbers.end());
        if (numbers.size() == 1) {
            parts.push_back(fmt::format("{}{:0{}}", prefix, numbers[0], width));
            continue;
        }
        std::vector<std::string> ranges;
        for (std::size_t i = 0; i < numbers.size();) {
            std::size_t j = i;
            // Slurm refuses a range of more hosts than its MAX_RANGE, and then the whole list.
            while (j + 1 < numbers.size() && numbers[j + 1] == numbers[j] + 1 && j + 1 - i < kSlurmMostInRange) ++j;
            ranges.push_back(j == i ? fmt::format("{:0{}}", numbers[i], width)
                                    : fmt::format("{:0{}}-{:0{}}", numbers[i], width, numbers[j], width));
            i = j + 1;
        }
        parts.push_back(fmt::format("{}[{}]", prefix, fmt::join(ranges, ",")));
    }
    return parts;
}

}  // namespace cumemctl
