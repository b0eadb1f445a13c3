// The memtest patterns and the kernels' interface, shared bit for bit by the CUDA kernels
// (memtest_kernels.cuh, built into the verify fatbin), the host code that launches them
// (memtest_run.cpp) and the fake driver that emulates them (tests/fakecuda/fake_memtest.cpp). Plain C++
// with no CUDA header, like verify_pattern.hpp, whose random pattern it reuses.
#pragma once

#include <cstdint>

#include "gpu/verify/verify_pattern.hpp"

namespace cumemctl::gpu::memtest {

// The kernels' names in the embedded module (extern "C"): write a pattern; read and compare it; read,
// compare and write the next pattern in the same pass (moving inversions).
inline constexpr const char* kFillKernel = "cumemctl_memtest_fill";
inline constexpr const char* kCheckKernel = "cumemctl_memtest_check";
inline constexpr const char* kCheckWriteKernel = "cumemctl_memtest_check_write";

// How a 16-byte word's value is made.
enum Kind : unsigned {
    kAddress = 0,   // own address: lo = the word's device address, hi = that + 8
    kConstant = 1,  // lo = hi = param (all zeros, all ones)
    kWalking = 2,   // bit (index + param) % 64 set in lo and clear in hi; swapped when param & 64
    kRandom = 3,    // verify's pattern_word(index, param): SplitMix64 of the index and the seed
};

// The one kernel parameter (by value). `index` counts 16-byte words from the start of the whole tested
// range, so the random pattern of a range is the same however it is cut into launches.
struct KernelArgs {
    unsigned long long base;         // device address of this launch's first word; 16-byte aligned
    unsigned long long words;        // 16-byte words in this launch
    unsigned long long first_index;  // the index of the first word in the whole range
    unsigned long long kind;         // Kind of the pattern written (fill) or expected (checks)
    unsigned long long param;
    unsigned long long next_kind;  // check_write: the pattern written after the compare
    unsigned long long next_param;
    unsigned long long log;  // device address of a MismatchLog (checks); 0 for the fill
};

// One mismatching word as the kernels record it.
struct MismatchRecord {
    unsigned long long address;  // the word's device address
    unsigned long long expected_lo, expected_hi;
    unsigned long long actual_lo, actual_hi;
};

// What the checks accumulate in device memory: `count` is every mismatching word (exact), and the first
// `capacity` of them (in no particular order) are in `records`. The host sets count to 0.
struct MismatchLog {
    unsigned long long count;
    unsigned long long capacity;
    MismatchRecord records[1];  // `capacity` of them
};

// The bytes of a log holding `capacity` records.
inline constexpr unsigned long long mismatch_log_bytes(unsigned long long capacity) {
    return 16 + 40 * (capacity == 0 ? 1 : capacity);
}

// The value of word `index` (whose device address is `address`) in pattern (kind, param).
CUMEMCTL_HOST_DEVICE verify::Word memtest_word(unsigned long long kind, unsigned long long param, std::uint64_t index,
                                               std::uint64_t address) {
    switch (kind) {
        case kAddress:
            return verify::Word{address, address + 8};
        case kConstant:
            return verify::Word{param, param};
        case kWalking: {
            const std::uint64_t one = std::uint64_t{1} << ((index + param) & 63);
            return (param & 64) != 0 ? verify::Word{~one, one} : verify::Word{one, ~one};
        }
        default:
            return verify::pattern_word(index, param);
    }
}

}  // namespace cumemctl::gpu::memtest
