// The verify pattern and the kernels' interface, shared bit for bit by the CUDA kernels
// (verify_kernels.cu), the host code that launches them (verify.cpp) and the fake driver that emulates
// them (tests/fakecuda/fake_module.cpp). Plain C++ with no CUDA header, so every side can include it.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define CUMEMCTL_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define CUMEMCTL_HOST_DEVICE inline
#endif

namespace cumemctl::gpu::verify {

// The names of the two kernels in the embedded module (extern "C", so not mangled).
inline constexpr const char* kFillKernel = "cumemctl_verify_fill";
inline constexpr const char* kCheckKernel = "cumemctl_verify_check";

// Threads per block of both kernels, and the blocks per multiprocessor their __launch_bounds__
// guarantee to fit, so that a grid of kBlocksPerSm x multiprocessors runs in one wave.
inline constexpr unsigned kThreads = 256;
inline constexpr unsigned kBlocksPerSm = 4;
// Words each thread has in flight per loop iteration (independent 16-byte loads or stores).
inline constexpr unsigned kUnroll = 4;

// What the check kernel accumulates in device memory: mismatching words and the lowest one's index.
// The host sets it to {0, ~0} before the check.
struct Counters {
    unsigned long long mismatches;
    unsigned long long first_index;
};

// The one kernel parameter of both kernels (passed by value): the range as 16-byte words plus
// 0 to 15 tail bytes, the seed, and the device address of a Counters (check only).
struct KernelArgs {
    unsigned long long base;        // device address of the range; 16-byte aligned
    unsigned long long words;       // whole 16-byte words
    unsigned long long tail_bytes;  // bytes after the last whole word, 0..15
    unsigned long long seed;
    unsigned long long counters;  // device address of a Counters; 0 for the fill
};

// One 16-byte word of the pattern: `lo` is stored first (bytes 0..7, little-endian), then `hi`.
struct Word {
    std::uint64_t lo;
    std::uint64_t hi;
};

// The SplitMix64 output function of x + the golden-ratio increment (Steele, Lea and Flood 2014):
// a bijection of 64-bit values whose output bits each depend on every input bit.
CUMEMCTL_HOST_DEVICE std::uint64_t mix64(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

// The pattern word at 16-byte word `index` from the start of the range, for `seed`. lo is
// mix64(index ^ seed), distinct for every word of a range; hi is lo with its halves swapped and every
// bit inverted, so each bit position holds both values across a few words and no two words are equal.
CUMEMCTL_HOST_DEVICE Word pattern_word(std::uint64_t index, std::uint64_t seed) {
    const std::uint64_t lo = mix64(index ^ seed);
    return Word{lo, ~((lo << 32) | (lo >> 32))};
}

// Byte `i` (0..15) of a pattern word as it lies in memory.
CUMEMCTL_HOST_DEVICE unsigned char pattern_byte(const Word& w, unsigned i) {
    const std::uint64_t half = i < 8 ? w.lo : w.hi;
    return static_cast<unsigned char>(half >> (8 * (i % 8)));
}

}  // namespace cumemctl::gpu::verify
