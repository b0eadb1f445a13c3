// Sizes with units: parsing what people type and printing what people read.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <string_view>

namespace cumemctl {

// Parses "4096", "2MiB", "1.5GiB", "1G", "10GB". Binary units (KiB, MiB, GiB, TiB and the bare K, M, G,
// T) are powers of 1024; decimal units (kB, KB, MB, GB, TB) powers of 1000. Throws UsageError on text that
// is empty, negative, not a whole number of bytes, in an unknown or ambiguous unit (b, Gb), or above 2^64-1.
std::uint64_t parse_size(std::string_view text);

// Formats bytes for a table: "0 B", "12345 B", "2 MiB", "1.5 GiB" (exact multiples print without decimals).
std::string format_size(std::uint64_t bytes);

// Rounds up to a multiple of granule (granule > 0). Throws UsageError where the result would overflow.
std::uint64_t round_up(std::uint64_t value, std::uint64_t granule);

// Two sizes as format_size writes them, with the digits that tell them apart where format_size's
// two decimals do not ("1.862 GiB" and "1.864 GiB", not "1.86 GiB" twice).
std::pair<std::string, std::string> format_sizes_apart(std::uint64_t a, std::uint64_t b);

// Rounds down to a multiple of granule (granule > 0).
constexpr std::uint64_t round_down(std::uint64_t value, std::uint64_t granule) {
    return value - value % granule;
}

}  // namespace cumemctl
