#include "gpu/le/logical_endpoint_checks.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "base/error.hpp"
#include "util/size.hpp"

namespace cumemctl::gpu {
namespace {

using u64 = std::uint64_t;

// a - b, or 0 where b is larger.
u64 minus(u64 a, u64 b) {
    return a > b ? a - b : 0;
}

// The multiples of `a` (> 0) nearest to v, below and above, that lie in [low_limit, high_limit].
std::vector<LeSuggestion> nearest_multiples(Setting property, u64 v, u64 a, u64 low_limit, u64 high_limit) {
    std::vector<LeSuggestion> out;
    const u64 down = v - v % a;
    if (down >= low_limit && down <= high_limit) out.push_back({property, down});
    if (v % a != 0 && down <= std::numeric_limits<u64>::max() - a) {
        const u64 up = down + a;
        if (up >= low_limit && up <= high_limit) out.push_back({property, up});
    }
    return out;
}

std::optional<LeViolation> check_multiple(Setting property, const char* what, u64 v, u64 a, u64 low_limit,
                                          u64 high_limit) {
    if (v % a == 0) return std::nullopt;
    return LeViolation{fmt::format("{} {} ({} bytes) is not a multiple of the bind alignment {} ({} bytes)", what,
                                   format_size(v), v, format_size(a), a),
                       nearest_multiples(property, v, a, low_limit, high_limit)};
}

// The rules on offsets alone: aligned, and inside the range they index.
std::optional<LeViolation> check_offsets(const LeBindPlan& p, u64 a) {
    if (auto v = check_multiple(Setting::endpoint_offset, "offset", p.offset, a, 0, minus(p.endpoint_size, a)))
        return v;
    if (p.offset >= p.endpoint_size) {
        return LeViolation{fmt::format("offset {} is at or past the end of the {} endpoint", format_size(p.offset),
                                       format_size(p.endpoint_size)),
                           {{Setting::endpoint_offset, round_down(minus(p.endpoint_size, a), a)}}};
    }
    if (auto v = check_multiple(Setting::mem_offset, "mem offset", p.mem_offset, a, 0, minus(p.allocation_size, a))) {
        return v;
    }
    if (p.mem_offset >= p.allocation_size) {
        return LeViolation{fmt::format("mem offset {} is at or past the end of the {} allocation",
                                       format_size(p.mem_offset), format_size(p.allocation_size)),
                           {{Setting::mem_offset, round_down(minus(p.allocation_size, a), a)}}};
    }
    return std::nullopt;
}

// A binding of `size` from `offset` must end inside its range (the allocation or the endpoint); the
// nearest valid values are the largest binding that fits both ranges, or the offset moved back.
std::optional<LeViolation> check_fits(u64 size, const char* offset_name, Setting offset_property, u64 offset,
                                      const char* range_name, u64 range, u64 room) {
    if (size <= range - offset) return std::nullopt;
    LeViolation v{fmt::format("bind size {} from {} {} runs past the end of the {} {} (size + {} must be at most "
                              "the {} size)",
                              format_size(size), offset_name, format_size(offset), format_size(range), range_name,
                              offset_name, range_name),
                  {{Setting::bind_size, room}}};
    if (size <= range) v.nearest.push_back({offset_property, range - size});
    return v;
}

}  // namespace

std::optional<LeViolation> check_endpoint_size(u64 size, const LeLimits& limits) {
    const u64 a = limits.bind_alignment;
    const u64 largest = round_down(limits.max_size, a);
    if (size == 0) return LeViolation{"the endpoint size must be more than 0", {{Setting::endpoint_size, a}}};
    if (auto v = check_multiple(Setting::endpoint_size, "endpoint size", size, a, a, largest)) return v;
    if (size > limits.max_size) {
        return LeViolation{fmt::format("endpoint size {} is more than the maximum {} for these properties: the "
                                       "request must shrink",
                                       format_size(size), format_size(limits.max_size)),
                           {{Setting::endpoint_size, largest}}};
    }
    return std::nullopt;
}

std::optional<LeViolation> check_bind_plan(const LeBindPlan& p, const LeLimits& limits) {
    const u64 a = limits.bind_alignment;
    if (auto v = check_offsets(p, a)) return v;
    const u64 room = round_down(largest_bind(p.endpoint_size, p.allocation_size, p.offset, p.mem_offset), a);
    if (p.bind_size == 0) return LeViolation{"the bind size must be more than 0", {{Setting::bind_size, room}}};
    if (auto v = check_multiple(Setting::bind_size, "bind size", p.bind_size, a, a, room)) return v;
    if (auto v = check_fits(p.bind_size, "mem offset", Setting::mem_offset, p.mem_offset, "allocation",
                            p.allocation_size, room)) {
        return v;
    }
    return check_fits(p.bind_size, "offset", Setting::endpoint_offset, p.offset, "endpoint", p.endpoint_size, room);
}

u64 largest_bind(u64 endpoint_size, u64 allocation_size, u64 offset, u64 mem_offset) {
    if (offset >= endpoint_size || mem_offset >= allocation_size) return 0;
    return std::min(endpoint_size - offset, allocation_size - mem_offset);
}

std::string size_argument(u64 bytes) {
    constexpr u64 kKiB = 1024;
    if (bytes != 0 && bytes % (kKiB * kKiB * kKiB) == 0) return fmt::format("{}GiB", bytes / (kKiB * kKiB * kKiB));
    if (bytes != 0 && bytes % (kKiB * kKiB) == 0) return fmt::format("{}MiB", bytes / (kKiB * kKiB));
    if (bytes != 0 && bytes % kKiB == 0) return fmt::format("{}KiB", bytes / kKiB);
    return std::to_string(bytes);
}

std::string nearest_remedy(const LeViolation& violation) {
    if (violation.nearest.empty()) return "choose smaller sizes or offsets";
    std::vector<std::string> values;
    for (const auto& s : violation.nearest) values.push_back(setting_name(s.property) + " " + size_argument(s.value));
    return fmt::format("nearest valid: {}", fmt::join(values, " or "));
}

void refuse(const LeViolation& violation) {
    throw Error(ExitCode::usage, violation.message, nearest_remedy(violation));
}

}  // namespace cumemctl::gpu
