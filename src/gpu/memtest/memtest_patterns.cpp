#include "gpu/memtest/memtest_patterns.hpp"
#include "util/comma_list.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "base/enum_words.hpp"
#include "base/error.hpp"
#include "gpu/verify/memtest_pattern.hpp"

namespace cumemctl::gpu::memtest {
namespace {

constexpr Pattern kAll[] = {Pattern::address, Pattern::inversions, Pattern::walking, Pattern::random};
constexpr std::uint64_t kOnes = ~std::uint64_t{0};

Pass fill(unsigned kind, std::uint64_t param) {
    return Pass{Pass::Op::fill, kind, param, 0, 0};
}
Pass check(unsigned kind, std::uint64_t param) {
    return Pass{Pass::Op::check, kind, param, 0, 0};
}
Pass check_write(unsigned kind, std::uint64_t param, unsigned next_kind, std::uint64_t next_param) {
    return Pass{Pass::Op::check_write, kind, param, next_kind, next_param};
}

constexpr auto kPatternWords = enum_words<Pattern>({{Pattern::address, "address"},
                                                    {Pattern::inversions, "inversions"},
                                                    {Pattern::walking, "walking"},
                                                    {Pattern::random, "random"}},
                                                   "?");

}  // namespace

std::string pattern_name(Pattern pattern) {
    return std::string(kPatternWords.word(pattern));
}

std::vector<Pattern> default_patterns() {
    return {std::begin(kAll), std::end(kAll)};
}

std::vector<Pattern> parse_pattern_list(std::string_view text) {
    if (text == "all") return default_patterns();
    std::vector<Pattern> out;
    for (const std::string_view name : split_commas(text)) {
        const std::optional<Pattern> p = kPatternWords.parse(name);
        if (!p) {
            throw Error(ExitCode::usage, fmt::format("'{}' is no memtest pattern", name),
                        "name patterns from address, inversions, walking and random, separated by commas, or all");
        }
        if (std::find(out.begin(), out.end(), *p) == out.end()) out.push_back(*p);
    }
    return out;
}

std::vector<Pass> pattern_passes(Pattern pattern, std::uint64_t seed) {
    switch (pattern) {
        case Pattern::address:
            return {fill(kAddress, 0), check(kAddress, 0)};
        case Pattern::inversions:
            // Zeros everywhere; each word checked for zeros and made ones; each checked for ones and made
            // zeros again; then zeros checked: both values held by every bit, each change read back.
            return {fill(kConstant, 0), check_write(kConstant, 0, kConstant, kOnes),
                    check_write(kConstant, kOnes, kConstant, 0), check(kConstant, 0)};
        case Pattern::walking:
            // A walking one in lo (a walking zero in hi), then the halves exchanged.
            return {fill(kWalking, 0), check_write(kWalking, 0, kWalking, 64), check(kWalking, 64)};
        case Pattern::random:
            return {fill(kRandom, seed), check(kRandom, seed)};
    }
    return {};
}

unsigned traffic_per_byte(const std::vector<Pass>& passes) {
    unsigned bytes = 0;
    for (const Pass& p : passes) bytes += p.op == Pass::Op::check_write ? 2 : 1;
    return bytes;
}

}  // namespace cumemctl::gpu::memtest
