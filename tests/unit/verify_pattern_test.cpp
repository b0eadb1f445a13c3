#include <doctest/doctest.h>

#include <bitset>
#include <set>
#include <utility>

#include "gpu/verify/verify_pattern.hpp"

using namespace cumemctl::gpu::verify;

TEST_CASE("mix64 is SplitMix64's output function") {
    // The first outputs of SplitMix64 seeded with 0 (Vigna's reference splitmix64.c): state k * gamma.
    constexpr std::uint64_t gamma = 0x9e3779b97f4a7c15ULL;
    CHECK(mix64(0) == 0xe220a8397b1dcdafULL);
    CHECK(mix64(gamma) == 0x6e789e6aa1b965f4ULL);
    CHECK(mix64(2 * gamma) == 0x06c45d188009454fULL);
}

TEST_CASE("a pattern word is the mix of index ^ seed and its inverted half-swap") {
    const Word w = pattern_word(5, 0x1234);
    CHECK(w.lo == mix64(5 ^ 0x1234));
    CHECK(w.lo == 0x0f0df9cad724a892ULL);
    CHECK(w.hi == ~0xd724a8920f0df9caULL);
}

TEST_CASE("pattern bytes lie little-endian, lo first") {
    const Word w{0x0807060504030201ULL, 0x100f0e0d0c0b0a09ULL};
    for (unsigned i = 0; i < 16; ++i) CHECK(pattern_byte(w, i) == i + 1);
}

TEST_CASE("no two words of a range are equal, in either half") {
    for (const std::uint64_t seed : {0ULL, 0x5eedULL, ~0ULL}) {
        std::set<std::uint64_t> los, his;
        std::set<std::pair<std::uint64_t, std::uint64_t>> words;
        for (std::uint64_t i = 0; i < (1U << 16); ++i) {
            const Word w = pattern_word(i, seed);
            los.insert(w.lo);
            his.insert(w.hi);
            words.insert({w.lo, w.hi});
        }
        CHECK(los.size() == 1U << 16);
        CHECK(his.size() == 1U << 16);
        CHECK(words.size() == 1U << 16);
    }
}

TEST_CASE("every bit of a word is 0 in some and 1 in other of the first 64 words") {
    std::bitset<128> ones, zeros;
    for (std::uint64_t i = 0; i < 64; ++i) {
        const Word w = pattern_word(i, 42);
        for (unsigned b = 0; b < 64; ++b) {
            ((w.lo >> b) & 1 ? ones : zeros).set(b);
            ((w.hi >> b) & 1 ? ones : zeros).set(64 + b);
        }
    }
    CHECK(ones.all());
    CHECK(zeros.all());
}

TEST_CASE("another seed changes every word") {
    for (std::uint64_t i = 0; i < 4096; ++i) {
        const Word a = pattern_word(i, 1), b = pattern_word(i, 2);
        CHECK_MESSAGE((a.lo != b.lo && a.hi != b.hi), "word ", i);
    }
}
