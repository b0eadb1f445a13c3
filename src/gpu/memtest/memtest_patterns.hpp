// The memtest patterns as passes over the whole tested range: which kernel each pass runs and with
// which pattern words (memtest_pattern.hpp), and how many bytes each moves.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cumemctl::gpu::memtest {

// The patterns, in the order the default set runs them.
enum class Pattern {
    address,     // own address: finds addressing and decode faults (two words that alias)
    inversions,  // moving inversions of zeros and ones: every bit holds 0, then 1, then 0
    walking,     // a walking one and a walking zero over each 64-bit half of a word
    random,      // random data from a seed (verify's pattern), repeatable with the same seed
};

// "address", "inversions", "walking", "random".
std::string pattern_name(Pattern pattern);

// The default set: every pattern, in the order above.
std::vector<Pattern> default_patterns();

// A comma-separated list of pattern names, or "all"; a name that is none of them is a usage error that
// lists the names (it does not spell the option).
std::vector<Pattern> parse_pattern_list(std::string_view text);

// One kernel pass over the whole range.
struct Pass {
    enum class Op { fill, check, check_write } op = Op::fill;
    unsigned kind = 0;  // Kind of the words written (fill) or expected (checks)
    std::uint64_t param = 0;
    unsigned next_kind = 0;  // check_write: written after the compare
    std::uint64_t next_param = 0;
};

// The passes of one pattern; `seed` is the random pattern's.
std::vector<Pass> pattern_passes(Pattern pattern, std::uint64_t seed);

// Bytes read plus written per byte of the range over all of a pattern's passes.
unsigned traffic_per_byte(const std::vector<Pass>& passes);

}  // namespace cumemctl::gpu::memtest
