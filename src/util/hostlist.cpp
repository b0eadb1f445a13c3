#include "util/hostlist.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace cumemctl {
namespace {

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

}  // namespace

std::string compress_hostlist(std::vector<std::string> hosts) {
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
            while (j + 1 < numbers.size() && numbers[j + 1] == numbers[j] + 1) ++j;
            ranges.push_back(j == i ? fmt::format("{:0{}}", numbers[i], width)
                                    : fmt::format("{:0{}}-{:0{}}", numbers[i], width, numbers[j], width));
            i = j + 1;
        }
        parts.push_back(fmt::format("{}[{}]", prefix, fmt::join(ranges, ",")));
    }
    return fmt::format("{}", fmt::join(parts, ","));
}

}  // namespace cumemctl
