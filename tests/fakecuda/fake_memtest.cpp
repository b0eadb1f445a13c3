// The memtest kernels on the host, over the fake's host-backed device memory, bit for bit as
// src/gpu/verify/memtest_kernels.cuh computes them, through a model of faulty memory read at every
// launch:
//
//   FAKECUDA_FLIP_BIT=OFFSET:BIT[,OFFSET:BIT...]  bit BIT (0..7) of the byte at OFFSET from the start
//       of the reserved range (cuMemAddressReserve) reads inverted: it is flipped after every write
//       that covers it (a cell stuck at the opposite of what was written).
//   FAKECUDA_STUCK_ADDRESS_BIT=B  address line B of every allocation is stuck at 0: an access at
//       allocation offset O goes to O with bit B cleared, so two words alias (a decode fault).
//
// FAKECUDA_MARK_AFTER_LAUNCHES=N:PATH creates PATH at the Nth kernel launch of the process.
#include "fake_memtest.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "fake_memory.hpp"

namespace fake {
namespace {

namespace mt = cumemctl::gpu::memtest;

// (byte offset in the reserved range, bit) pairs of FAKECUDA_FLIP_BIT.
std::vector<std::pair<std::uint64_t, unsigned>> flipped_bits() {
    std::vector<std::pair<std::uint64_t, unsigned>> out;
    const char* env = std::getenv("FAKECUDA_FLIP_BIT");
    if (env == nullptr) return out;
    std::stringstream ss(env);
    std::string item;
    while (std::getline(ss, item, ',')) {
        const auto colon = item.find(':');
        if (colon == std::string::npos) continue;
        out.emplace_back(std::stoull(item.substr(0, colon), nullptr, 0),
                         static_cast<unsigned>(std::stoul(item.substr(colon + 1))) % 8);
    }
    return out;
}

// Where word `i` of the launch really lies: the stuck address line applied within its allocation.
struct Decoder {
    std::uintptr_t allocation_start = 0;  // host address of the allocation's offset 0
    std::uint64_t first_offset = 0;       // the launch base's offset in the allocation
    std::uint64_t clear = 0;              // the address bit stuck at 0, as a mask; 0 for none

    unsigned char* word(const mt::KernelArgs& a, std::uint64_t i) const {
        if (clear == 0) return reinterpret_cast<unsigned char*>(a.base + 16 * i);
        return reinterpret_cast<unsigned char*>(allocation_start + ((first_offset + 16 * i) & ~clear));
    }
};

Decoder decoder_for(const mt::KernelArgs& a) {
    Decoder d;
    const char* env = std::getenv("FAKECUDA_STUCK_ADDRESS_BIT");
    std::size_t offset = 0;
    if (env == nullptr || allocation_at(a.base, &offset) == nullptr) return d;
    d.allocation_start = static_cast<std::uintptr_t>(a.base) - offset;
    d.first_offset = offset;
    d.clear = std::uint64_t{1} << std::stoul(env);
    return d;
}

void store(unsigned char* p, const cumemctl::gpu::verify::Word& w) {
    std::memcpy(p, &w.lo, 8);
    std::memcpy(p + 8, &w.hi, 8);
}

// Inverts the flipped bits that lie in the launch's words (after its writes).
void apply_flips(const mt::KernelArgs& a) {
    const Reservation* r = reservation_at(a.base);
    if (r == nullptr) return;
    for (const auto& [offset, bit] : flipped_bits()) {
        const std::uintptr_t p = r->base + offset;
        if (p < a.base || p >= a.base + 16 * a.words) continue;
        *reinterpret_cast<unsigned char*>(p) ^= static_cast<unsigned char>(1u << bit);
    }
}

void record(mt::MismatchLog* log, std::uint64_t address, const cumemctl::gpu::verify::Word& expected,
            const unsigned char* actual) {
    const unsigned long long slot = log->count++;
    if (slot >= log->capacity) return;
    mt::MismatchRecord& r = log->records[slot];
    r.address = address;
    r.expected_lo = expected.lo;
    r.expected_hi = expected.hi;
    std::memcpy(&r.actual_lo, actual, 8);
    std::memcpy(&r.actual_hi, actual + 8, 8);
}

}  // namespace

void run_memtest(MemtestOp op, const mt::KernelArgs& a) {
    const Decoder decoder = decoder_for(a);
    auto* log = reinterpret_cast<mt::MismatchLog*>(a.log);
    for (std::uint64_t i = 0; i < a.words; ++i) {
        const std::uint64_t address = a.base + 16 * i;
        unsigned char* p = decoder.word(a, i);
        if (op != MemtestOp::fill) {
            const auto expected = mt::memtest_word(a.kind, a.param, a.first_index + i, address);
            unsigned char want[16];
            store(want, expected);
            if (std::memcmp(p, want, 16) != 0) record(log, address, expected, p);
        }
        if (op == MemtestOp::fill) store(p, mt::memtest_word(a.kind, a.param, a.first_index + i, address));
        if (op == MemtestOp::check_write) {
            store(p, mt::memtest_word(a.next_kind, a.next_param, a.first_index + i, address));
        }
    }
    if (op != MemtestOp::check) apply_flips(a);
}

void count_launch() {
    static int launches = 0;
    ++launches;
    const char* env = std::getenv("FAKECUDA_MARK_AFTER_LAUNCHES");
    if (env == nullptr) return;
    const std::string text = env;
    const auto colon = text.find(':');
    if (colon == std::string::npos || std::atoi(text.c_str()) != launches) return;
    const int fd = ::open(text.substr(colon + 1).c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0) ::close(fd);
}

}  // namespace fake
