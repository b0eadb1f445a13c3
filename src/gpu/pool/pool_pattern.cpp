#include "gpu/pool/pool_pattern.hpp"

#include <algorithm>
#include <charconv>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.hpp"
#include "util/size.hpp"
#include "util/comma_list.hpp"

namespace cumemctl::gpu {
namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

// A size as a workload item writes it: 16MiB, 1GiB, 4096 (bytes where no unit divides it).
std::string unit_size(std::uint64_t bytes) {
    for (const auto& [unit, name] :
         {std::pair{1ULL << 30, "GiB"}, std::pair{1ULL << 20, "MiB"}, std::pair{1ULL << 10, "KiB"}}) {
        if (bytes % unit == 0) return fmt::format("{}{}", bytes / unit, name);
    }
    return std::to_string(bytes);
}

[[noreturn]] void bad_pattern(std::string_view text, std::string_view why) {
    throw Error(ExitCode::usage, fmt::format("invalid workload pattern '{}': {}", text, why),
                "write COUNTxSIZE items separated by commas, for example 64x16MiB or 8x1GiB,16x2MiB");
}

WorkloadItem parse_item(std::string_view pattern, std::string_view item) {
    if (item.empty()) bad_pattern(pattern, "an empty item");
    WorkloadItem out{1, 0};
    std::string_view size_text = item;
    if (const auto x = item.find('x'); x != std::string_view::npos) {
        const std::string_view count = item.substr(0, x);
        const char* end = count.data() + count.size();
        const auto [ptr, ec] = std::from_chars(count.data(), end, out.count);
        if (count.empty() || ec != std::errc{} || ptr != end) {
            bad_pattern(pattern, fmt::format("'{}' is not a count", count));
        }
        size_text = item.substr(x + 1);
    }
    try {
        out.size = parse_size(size_text);
    } catch (const Error& e) {
        bad_pattern(pattern, e.problem().message);
    }
    if (out.count == 0) bad_pattern(pattern, fmt::format("'{}' makes no allocation", item));
    if (out.size == 0) bad_pattern(pattern, fmt::format("'{}' allocates zero bytes", item));
    return out;
}

}  // namespace

std::uint64_t WorkloadPattern::allocations() const {
    std::uint64_t n = 0;
    for (const auto& i : items) n += i.count;
    return n;
}

std::uint64_t WorkloadPattern::bytes() const {
    return pool_footprint(*this, 1);
}

WorkloadPattern parse_workload_pattern(std::string_view text) {
    WorkloadPattern p;
    p.text = std::string(text);
    if (text.empty()) bad_pattern(text, "empty");
    std::uint64_t allocations = 0;
    for (const std::string_view piece : split_commas(text)) {
        const WorkloadItem item = parse_item(text, piece);
        if (item.count > kMaxWorkloadAllocations - allocations) {
            bad_pattern(text, fmt::format("more than {} allocations", kMaxWorkloadAllocations));
        }
        allocations += item.count;
        p.items.push_back(item);
    }
    try {
        (void)p.bytes();
    } catch (const Error&) {
        bad_pattern(text, "more than 2^64-1 bytes in all");
    }
    return p;
}

std::uint64_t pool_footprint(const WorkloadPattern& pattern, std::uint64_t granule) {
    std::uint64_t total = 0;
    for (const auto& i : pattern.items) {
        const std::uint64_t each = round_up(i.size, granule);
        if (each > kMax / i.count || each * i.count > kMax - total) {
            throw Error(ExitCode::usage, fmt::format("workload '{}' adds up to more than 2^64-1 bytes", pattern.text));
        }
        total += each * i.count;
    }
    return total;
}

std::string no_room_message(std::string_view what, std::uint64_t footprint, std::uint64_t available,
                            std::string_view where) {
    return fmt::format("{} needs {} ({} bytes) but {} is {} ({} bytes); nothing was allocated", what,
                       format_size(footprint), footprint, where, format_size(available), available);
}

NoRoomError::NoRoomError(std::string what_text, std::uint64_t footprint_bytes, std::uint64_t available_bytes,
                         std::string where_text)
    : Error(ExitCode::usage, no_room_message(what_text, footprint_bytes, available_bytes, where_text),
            fmt::format("ask for at most {} in all", format_size(available_bytes))),
      what(std::move(what_text)),
      footprint(footprint_bytes),
      available(available_bytes),
      where(std::move(where_text)) {}

void require_fits(std::string_view what, std::uint64_t footprint, std::uint64_t available, std::string_view where) {
    if (footprint > available) throw NoRoomError(std::string(what), footprint, available, std::string(where));
}

std::optional<WorkloadPattern> shrink_to_fit(const WorkloadPattern& pattern, std::uint64_t granule,
                                             std::uint64_t available) {
    if (pool_footprint(pattern, granule) <= available) return pattern;
    WorkloadPattern fitted = pattern;
    while (!fitted.items.empty() && pool_footprint(fitted, granule) > available) {
        // The most allocations of the last item that fit, by bisection (the footprint grows with the count).
        WorkloadItem& last = fitted.items.back();
        std::uint64_t fits = 0, over = last.count;
        while (over - fits > 1) {
            last.count = fits + (over - fits) / 2;
            (pool_footprint(fitted, granule) <= available ? fits : over) = last.count;
        }
        last.count = fits;
        if (last.count == 0) fitted.items.pop_back();
    }
    if (fitted.items.empty()) return std::nullopt;
    std::vector<std::string> parts;
    for (const WorkloadItem& item : fitted.items)
        parts.push_back(fmt::format("{}x{}", item.count, unit_size(item.size)));
    fitted.text = fmt::format("{}", fmt::join(parts, ","));
    return fitted;
}

}  // namespace cumemctl::gpu
