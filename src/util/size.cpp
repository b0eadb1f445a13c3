#include "util/size.hpp"

#include <array>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "base/error.hpp"

namespace cumemctl {
namespace {

struct Unit {
    std::string_view name;
    std::uint64_t factor;
};

constexpr std::uint64_t KiB = 1024ULL;
constexpr std::array<Unit, 18> kUnits{{
    {"", 1},
    {"B", 1},
    {"K", KiB},
    {"KiB", KiB},
    {"M", KiB* KiB},
    {"MiB", KiB* KiB},
    {"G", KiB* KiB* KiB},
    {"GiB", KiB* KiB* KiB},
    {"T", KiB* KiB* KiB* KiB},
    {"TiB", KiB* KiB* KiB* KiB},
    {"kB", 1000ULL},
    {"KB", 1000ULL},
    {"MB", 1000ULL * 1000},
    {"GB", 1000ULL * 1000 * 1000},
    {"TB", 1000ULL * 1000 * 1000 * 1000},
    {"k", KiB},
    {"m", KiB* KiB},
    {"g", KiB* KiB* KiB},
}};

constexpr const char* kSizeRemedy =
    "write a whole number of bytes with an optional unit: 4096, 64KiB, 2MiB, 1.5GiB, 1G "
    "(K, M, G, T and KiB..TiB are powers of 1024; kB, MB, GB, TB powers of 1000)";

[[noreturn]] void bad_size(std::string_view text, std::string_view why, std::string remedy = kSizeRemedy) {
    throw Error(ExitCode::usage, fmt::format("invalid size '{}': {}", text, why), std::move(remedy));
}

// The nearest whole sizes to a fraction of a unit (1.4G is 1503238553.6 bytes): the same in the next
// smaller unit, rounded (1434MiB), and in bytes, rounded down.
std::string whole_suggestion(std::uint64_t whole_bytes, unsigned __int128 scaled, std::uint64_t frac_scale,
                             std::uint64_t factor) {
    const long double exact =
        static_cast<long double>(whole_bytes) + static_cast<long double>(scaled) / static_cast<long double>(frac_scale);
    const bool binary = factor % 1024 == 0;
    const std::uint64_t smaller = binary ? factor / 1024 : factor / 1000;
    static constexpr std::array<std::string_view, 5> iec{"B", "KiB", "MiB", "GiB", "TiB"};
    static constexpr std::array<std::string_view, 5> si{"B", "kB", "MB", "GB", "TB"};
    std::size_t unit = 0;
    for (std::uint64_t f = smaller; f > 1; f /= binary ? 1024 : 1000) ++unit;
    const auto in_smaller = static_cast<std::uint64_t>(std::llround(exact / static_cast<long double>(smaller)));
    const auto bytes = static_cast<std::uint64_t>(exact);
    return fmt::format("give a whole number of bytes: {}{} ({} bytes) or {}", in_smaller,
                       unit == 0 ? "" : std::string(binary ? iec[unit] : si[unit]), in_smaller * smaller, bytes);
}

}  // namespace

std::uint64_t parse_size(std::string_view text) {
    if (text.empty()) bad_size(text, "empty");
    std::size_t i = 0;
    std::uint64_t whole = 0;
    bool any_digit = false;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
        any_digit = true;
        const auto digit = static_cast<std::uint64_t>(text[i] - '0');
        if (whole > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) bad_size(text, "too large");
        whole = whole * 10 + digit;
    }
    // The fraction is kept as digits over a power of ten, so that 1.5GiB is exact.
    std::uint64_t frac = 0, frac_scale = 1;
    if (i < text.size() && text[i] == '.') {
        ++i;
        for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
            any_digit = true;
            if (frac_scale >= 1000000000000ULL) bad_size(text, "too many decimal places");
            frac = frac * 10 + static_cast<std::uint64_t>(text[i] - '0');
            frac_scale *= 10;
        }
    }
    if (!any_digit) {
        bad_size(text, text[0] == '-' ? "negative" : "no number");
    }
    std::string_view unit = text.substr(i);
    if (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
    const Unit* found = nullptr;
    for (const auto& u : kUnits) {
        if (u.name == unit) found = &u;
    }
    if (found == nullptr) {
        if (unit.size() >= 2 && unit.back() == 'b') bad_size(text, "'b' would mean bits; write B for bytes");
        bad_size(text, fmt::format("unknown unit '{}'", unit));
    }
    const std::uint64_t factor = found->factor;
    if (whole > std::numeric_limits<std::uint64_t>::max() / factor) bad_size(text, "larger than 2^64-1 bytes");
    std::uint64_t bytes = whole * factor;
    if (frac != 0) {
        // frac/frac_scale * factor must be a whole number of bytes.
        const unsigned __int128 scaled = static_cast<unsigned __int128>(frac) * factor;
        if (scaled % frac_scale != 0) {
            bad_size(text, "not a whole number of bytes", whole_suggestion(bytes, scaled, frac_scale, factor));
        }
        const auto extra = static_cast<std::uint64_t>(scaled / frac_scale);
        if (bytes > std::numeric_limits<std::uint64_t>::max() - extra) bad_size(text, "larger than 2^64-1 bytes");
        bytes += extra;
    }
    return bytes;
}

std::string format_size(std::uint64_t bytes) {
    static constexpr std::array<std::string_view, 5> names{"B", "KiB", "MiB", "GiB", "TiB"};
    std::size_t unit = 0;
    double value = static_cast<double>(bytes);
    std::uint64_t divisor = 1;
    while (unit + 1 < names.size() && bytes >= divisor * 1024) {
        divisor *= 1024;
        ++unit;
    }
    if (unit == 0) return fmt::format("{} B", bytes);
    value /= static_cast<double>(divisor);
    if (bytes % divisor == 0) return fmt::format("{} {}", bytes / divisor, names[unit]);
    return fmt::format("{:.2f} {}", value, names[unit]);
}

std::pair<std::string, std::string> format_sizes_apart(std::uint64_t a, std::uint64_t b) {
    std::string x = format_size(a), y = format_size(b);
    if (a == b || x != y) return {x, y};
    // The same unit for both, with the digits that tell them apart (at most 9).
    static constexpr std::array<std::string_view, 5> names{"B", "KiB", "MiB", "GiB", "TiB"};
    std::size_t unit = 0;
    std::uint64_t divisor = 1;
    while (unit + 1 < names.size() && std::min(a, b) >= divisor * 1024) divisor *= 1024, ++unit;
    for (int digits = 3; digits <= 9 && x == y; ++digits) {
        x = fmt::format("{:.{}f} {}", static_cast<double>(a) / static_cast<double>(divisor), digits, names[unit]);
        y = fmt::format("{:.{}f} {}", static_cast<double>(b) / static_cast<double>(divisor), digits, names[unit]);
    }
    return {x, y};
}

std::uint64_t round_up(std::uint64_t value, std::uint64_t granule) {
    const std::uint64_t rem = value % granule;
    if (rem == 0) return value;
    if (value > std::numeric_limits<std::uint64_t>::max() - (granule - rem)) {
        throw Error(ExitCode::usage, fmt::format("{} rounded up to {} overflows", value, granule));
    }
    return value + (granule - rem);
}

}  // namespace cumemctl
