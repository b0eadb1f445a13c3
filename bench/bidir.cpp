// bench_bidir: one direction of host<->device copies timed while the other direction copies throughout,
// queued one of several ways, to tell which way of queueing moves the timed direction's figure. Both
// `bandwidth`'s both-ways figure and nvbandwidth's bidirectional tests time a direction under the other;
// they queue the copies differently (scripts/gpu-bidir-probe.sh runs every way beside both tools).
//
//   bench_bidir h2d|d2h WAY [SIZE_MIB [LOOPS [STREAMS [SAMPLES]]]]
//
// The timed direction copies SIZE_MIB (default 512) LOOPS times (default 16) from one buffer to another,
// after one untimed copy each way, on device 0. STREAMS (default 0) streams are made first and kept, so
// that the two streams timed are the context's STREAMS+1th and STREAMS+2th, as a tool that made streams
// before them has them (a driver may deal streams to copy engines in turn). SAMPLES (default 1, at most
// 9) times the copies that many times in the one process, as nvbandwidth takes three samples and prints
// their median. WAY:
//   nvbandwidth  as nvbandwidth: one cuMemcpyAsync a copy; the other direction copies from and to buffers
//                twice the size, LOOPS times; both streams held until every copy is queued
//   same-buffers the other direction on buffers of the timed one's size, 2 x LOOPS copies (the same bytes)
//   pieces       both directions in 256 MiB pieces with an event after each (nvbandwidth's buffers)
//   pieces-timed     pieces with events on the timed direction only
//   pieces-other     pieces with events on the other direction only
//   cumemctl     as `bandwidth`: typed copies (cuMemcpyHtoDAsync, cuMemcpyDtoHAsync) in 256 MiB pieces
//                with an event after each, the other direction on same-size buffers, held likewise
//   no-hold      cumemctl's, the streams not held: each copies as soon as it is queued
//   host-pieces  cumemctl's, its host buffers too: one cuMemHostAlloc (no flags) a 256 MiB piece, not one
//                for the whole buffer
//   nvbandwidth-warm  nvbandwidth's, with its warmup too: each stream copies 4 times after the hold and
//                before its start, the other's start after the timed one's, so that the timed copies
//                begin with the other direction already copying
//   cumemctl-warm     cumemctl's, warmed up likewise
// Prints one JSON line: the way, the timed direction, the streams made first, its GB/s and the other
// direction's (medians of the samples), and each sample's GB/s in order.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "bench_driver.hpp"

namespace {

using bench::check;

#define BIDIR_API(X)                   \
    X(cuMemAlloc, 3020)                \
    X(cuMemFree, 3020)                 \
    X(cuMemHostAlloc, 2020)            \
    X(cuMemFreeHost, 2000)             \
    X(cuMemHostGetDevicePointer, 3020) \
    X(cuMemcpyAsync, 4000)             \
    X(cuMemcpyHtoDAsync, 3020)         \
    X(cuMemcpyDtoHAsync, 3020)         \
    X(cuStreamCreate, 2000)            \
    X(cuStreamDestroy, 4000)           \
    X(cuStreamWaitValue32, 11070)      \
    X(cuStreamWaitEvent, 3020)         \
    X(cuStreamSynchronize, 2000)       \
    X(cuEventCreate, 2000)             \
    X(cuEventRecord, 2000)             \
    X(cuEventElapsedTime, 2000)        \
    X(cuEventDestroy, 4000)

struct Api : bench::ContextApi {
    BIDIR_API(BENCH_MEMBER)
};

Api load_api() {
    using bench::resolve;
    const auto get_proc = bench::open_driver();
    Api a;
    bench::resolve_context(get_proc, a);
    BIDIR_API(BENCH_RESOLVE)
    return a;
}

constexpr std::uint64_t kPiece = 256ULL << 20;

// How one direction's copies are queued.
struct Queueing {
    bool typed = false;   // cuMemcpyHtoDAsync / cuMemcpyDtoHAsync rather than cuMemcpyAsync
    bool pieces = false;  // 256 MiB pieces, an event after each
};

struct Way {
    const char* name;
    Queueing timed, other;
    bool double_buffers;  // the other direction's buffers twice the size, as many copies as the timed one
    bool hold;            // both streams held until every copy is queued
    bool host_pieces;     // host buffers allocated a piece at a time (only where both directions copy pieces)
    bool warm = false;    // 4 copies on each stream after the hold, before the starts (nvbandwidth's warmup)
};

constexpr Way kWays[] = {
    {"nvbandwidth", {false, false}, {false, false}, true, true, false},
    {"same-buffers", {false, false}, {false, false}, false, true, false},
    {"pieces", {false, true}, {false, true}, true, true, false},
    {"pieces-timed", {false, true}, {false, false}, true, true, false},
    {"pieces-other", {false, false}, {false, true}, true, true, false},
    {"cumemctl", {true, true}, {true, true}, false, true, false},
    {"no-hold", {true, true}, {true, true}, false, false, false},
    {"host-pieces", {true, true}, {true, true}, false, true, true},
    {"nvbandwidth-warm", {false, false}, {false, false}, true, true, false, true},
    {"cumemctl-warm", {true, true}, {true, true}, false, true, false, true},
};

// One direction: its device and pinned host buffers of `size` bytes, and its stream. The host buffer is
// one allocation, or one a kPiece (`bandwidth`'s PinnedBuffer).
struct Direction {
    bool to_device = false;
    std::uint64_t size = 0;
    CUdeviceptr device = 0;
    std::uint64_t host_piece = 0;  // the bytes of each host allocation but the last
    std::vector<void*> hosts;      // the host buffer's allocations
    CUstream stream = nullptr;
    char* host_at(std::uint64_t off) const { return static_cast<char*>(hosts[off / host_piece]) + off % host_piece; }
};

Direction make_direction(const Api& a, bool to_device, std::uint64_t size, bool host_pieces) {
    Direction d;
    d.to_device = to_device, d.size = size;
    check(a.cuMemAlloc(&d.device, size), "cuMemAlloc");
    d.host_piece = host_pieces ? kPiece : size;
    for (std::uint64_t off = 0; off < size; off += d.host_piece) {
        const std::uint64_t n = std::min(d.host_piece, size - off);
        void* p = nullptr;
        check(a.cuMemHostAlloc(&p, n, host_pieces ? 0 : CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc");
        std::memset(p, 0x5a, n);
        d.hosts.push_back(p);
    }
    check(a.cuStreamCreate(&d.stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    return d;
}

void free_direction(const Api& a, Direction& d) {
    a.cuStreamDestroy(d.stream);
    for (void* p : d.hosts) a.cuMemFreeHost(p);
    a.cuMemFree(d.device);
}

// Queues `copies` copies of the direction's whole buffer, as `q` says; `events` keeps the events made.
void queue(const Api& a, const Direction& d, const Queueing& q, int copies, std::vector<CUevent>& events) {
    const auto one = [&](std::uint64_t off, std::uint64_t n) {
        char* host = d.host_at(off);
        const CUdeviceptr dev = d.device + off;
        if (q.typed) {
            check(
                d.to_device ? a.cuMemcpyHtoDAsync(dev, host, n, d.stream) : a.cuMemcpyDtoHAsync(host, dev, n, d.stream),
                "typed copy");
        } else {
            const auto h = static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(host));
            check(d.to_device ? a.cuMemcpyAsync(dev, h, n, d.stream) : a.cuMemcpyAsync(h, dev, n, d.stream),
                  "cuMemcpyAsync");
        }
    };
    for (int c = 0; c < copies; ++c) {
        if (!q.pieces) {
            one(0, d.size);
            continue;
        }
        for (std::uint64_t off = 0; off < d.size; off += kPiece) {
            one(off, std::min(kPiece, d.size - off));
            CUevent e = nullptr;
            check(a.cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
            check(a.cuEventRecord(e, d.stream), "cuEventRecord");
            events.push_back(e);
        }
    }
}

double seconds_between(const Api& a, CUevent from, CUevent to) {
    float ms = 0;
    check(a.cuEventElapsedTime(&ms, from, to), "cuEventElapsedTime");
    return ms / 1e3;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The hold: a host word both streams wait on (cuStreamWaitValue32) until every copy of a sample is
// queued; sample n waits for n and is let go by writing n.
struct Hold {
    std::uint32_t* word = nullptr;
    CUdeviceptr at = 0;
};

// GB/s of the timed direction and of the other in one sample: `loops` copies timed while the other
// direction copies throughout, queued as `way` says.
std::pair<double, double> sample(const Api& a, const Way& way, const Direction& timed, const Direction& other,
                                 int loops, const Hold& hold, std::uint32_t n, std::vector<CUevent>& events) {
    const int other_copies = way.double_buffers ? loops : 2 * loops;
    if (way.hold) {
        check(a.cuStreamWaitValue32(timed.stream, hold.at, n, CU_STREAM_WAIT_VALUE_GEQ), "cuStreamWaitValue32");
        check(a.cuStreamWaitValue32(other.stream, hold.at, n, CU_STREAM_WAIT_VALUE_GEQ), "cuStreamWaitValue32");
    }
    CUevent start = nullptr, end = nullptr, other_start = nullptr, other_end = nullptr;
    for (CUevent* e : {&start, &end, &other_start, &other_end}) {
        check(a.cuEventCreate(e, CU_EVENT_DEFAULT), "cuEventCreate");
        events.push_back(*e);
    }
    if (way.warm) {
        queue(a, timed, way.timed, 4, events);
        queue(a, other, way.other, 4, events);
    }
    check(a.cuEventRecord(start, timed.stream), "cuEventRecord");
    if (way.warm) check(a.cuStreamWaitEvent(other.stream, start, 0), "cuStreamWaitEvent");
    check(a.cuEventRecord(other_start, other.stream), "cuEventRecord");
    queue(a, timed, way.timed, loops, events);
    check(a.cuEventRecord(end, timed.stream), "cuEventRecord");
    queue(a, other, way.other, other_copies, events);
    check(a.cuEventRecord(other_end, other.stream), "cuEventRecord");
    if (way.hold) __atomic_store_n(hold.word, n, __ATOMIC_SEQ_CST);
    check(a.cuStreamSynchronize(timed.stream), "cuStreamSynchronize");
    check(a.cuStreamSynchronize(other.stream), "cuStreamSynchronize");
    return {static_cast<double>(timed.size) * loops / seconds_between(a, start, end) / 1e9,
            static_cast<double>(other.size) * other_copies / seconds_between(a, other_start, other_end) / 1e9};
}

}  // namespace

int main(int argc, char** argv) {
    const Way* way = nullptr;
    if (argc >= 3) {
        for (const Way& w : kWays) {
            if (std::strcmp(argv[2], w.name) == 0) way = &w;
        }
    }
    if (argc < 3 || argc > 7 || way == nullptr ||
        (std::strcmp(argv[1], "h2d") != 0 && std::strcmp(argv[1], "d2h") != 0)) {
        std::fprintf(stderr, "usage: bench_bidir h2d|d2h WAY [SIZE_MIB [LOOPS [STREAMS [SAMPLES]]]]; WAY:");
        for (const Way& w : kWays) std::fprintf(stderr, " %s", w.name);
        std::fprintf(stderr, "\n");
        return 2;
    }
    const bool timed_to_device = std::strcmp(argv[1], "h2d") == 0;
    const std::uint64_t size = (argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 512) << 20;
    const int loops = argc > 4 ? std::max(1, std::atoi(argv[4])) : 16;
    const int streams_first = argc > 5 ? std::atoi(argv[5]) : 0;
    const int samples = argc > 6 ? std::atoi(argv[6]) : 1;
    if (size == 0) {
        std::fprintf(stderr, "bench_bidir: SIZE_MIB must be at least 1\n");
        return 2;
    }
    if (streams_first < 0 || streams_first > 64) {
        std::fprintf(stderr, "bench_bidir: STREAMS must be 0 to 64\n");
        return 2;
    }
    if (samples < 1 || samples > 9) {
        std::fprintf(stderr, "bench_bidir: SAMPLES must be 1 to 9\n");
        return 2;
    }

    const Api a = load_api();
    check(a.cuInit(0), "cuInit");
    CUcontext ctx = nullptr;
    check(a.cuDevicePrimaryCtxRetain(&ctx, 0), "cuDevicePrimaryCtxRetain");
    check(a.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    std::vector<CUstream> first(static_cast<std::size_t>(streams_first));
    for (CUstream& s : first) check(a.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    Direction timed = make_direction(a, timed_to_device, size, way->host_pieces);
    Direction other = make_direction(a, !timed_to_device, way->double_buffers ? 2 * size : size, way->host_pieces);
    std::vector<CUevent> events;
    queue(a, timed, way->timed, 1, events);  // untimed: the first copy of a buffer pays for its mappings
    queue(a, other, way->other, 1, events);
    check(a.cuStreamSynchronize(timed.stream), "cuStreamSynchronize");
    check(a.cuStreamSynchronize(other.stream), "cuStreamSynchronize");

    Hold hold;
    if (way->hold) {
        check(a.cuMemHostAlloc(reinterpret_cast<void**>(&hold.word), sizeof *hold.word,
                               CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP),
              "cuMemHostAlloc");
        __atomic_store_n(hold.word, 0U, __ATOMIC_SEQ_CST);
        check(a.cuMemHostGetDevicePointer(&hold.at, hold.word, 0), "cuMemHostGetDevicePointer");
    }
    std::vector<double> gbps, other_gbps;
    for (int n = 1; n <= samples; ++n) {
        const auto [g, o] = sample(a, *way, timed, other, loops, hold, static_cast<std::uint32_t>(n), events);
        gbps.push_back(g), other_gbps.push_back(o);
    }
    std::string each;
    for (const double g : gbps) each += (each.empty() ? "" : ", ") + std::to_string(g);
    std::printf(
        "{\"way\": \"%s\", \"timed\": \"%s\", \"streams_first\": %d, \"size_bytes\": %llu, \"loops\": %d, "
        "\"gbps\": %.3f, \"other_gbps\": %.3f, \"samples\": [%s]}\n",
        way->name, timed_to_device ? "h2d" : "d2h", streams_first, static_cast<unsigned long long>(size), loops,
        median(gbps), median(other_gbps), each.c_str());

    for (CUevent e : events) a.cuEventDestroy(e);
    if (hold.word != nullptr) a.cuMemFreeHost(hold.word);
    free_direction(a, timed);
    free_direction(a, other);
    for (CUstream s : first) a.cuStreamDestroy(s);
    a.cuCtxSetCurrent(nullptr);
    a.cuDevicePrimaryCtxRelease(0);
    return 0;
}
