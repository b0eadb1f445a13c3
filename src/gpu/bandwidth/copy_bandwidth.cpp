#include "gpu/bandwidth/copy_bandwidth.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "base/enum_words.hpp"
#include "base/interrupt.hpp"
#include "base/scope_exit.hpp"
#include "cuda/driver_call.hpp"
#include "cuda/owned_handle.hpp"
#include "gpu/device/primary_context.hpp"
#include "gpu/vmm/vmm_resources.hpp"
#include "util/index_list.hpp"
#include "util/size.hpp"
#include "util/stopwatch.hpp"
#include "util/text_file.hpp"
#include "util/thread_binding.hpp"

namespace cumemctl::gpu {
namespace {

// A copy is cut into pieces of at most kPiece bytes, and a stream is kept kQueuedSeconds of copies ahead
// of the host (at most kQueued bytes): a stop request (SIGINT, SIGTERM) is seen between two pieces, and
// what is queued then, which must end before the buffers go, takes a fraction of a second on any link
// (a link trained down to Gen1 x1 moves 0.25 GB/s: 1 GiB queued there would take 4 s), while the stream
// never runs dry. Buffers are made and written in pieces too.
constexpr std::uint64_t kPiece = 256ULL << 20;
constexpr std::uint64_t kQueued = 1ULL << 30;
constexpr double kQueuedSeconds = 0.25;

// Calls `piece(offset, bytes)` for each piece of `size` bytes, checking for a stop request before each.
template <class Piece>
void in_pieces(std::uint64_t size, Piece&& piece) {
    for (std::uint64_t off = 0; off < size; off += kPiece) {
        check_interrupted();
        piece(off, std::min(kPiece, size - off));
    }
}

// Work put on a stream: the piece of one copy at `offset`, of `bytes`.
using Enqueue = std::function<void(CUstream, std::uint64_t offset, std::uint64_t bytes)>;

// Device memory, written before any copy reads it (a copy of memory never written reads
// uninitialised memory, which initcheck reports), the write finished before the copies' streams,
// which do not wait for the null stream, start.
OwnedHandle<CUdeviceptr> copy_device_buffer(const DriverApi& api, std::uint64_t size) {
    CU_REQUIRE(api, cuMemFree);
    OwnedHandle<CUdeviceptr> b([&api](CUdeviceptr p) { return api.cuMemFree(p); });
    CU_CALL(api, cuMemAlloc, b.out(), size);
    in_pieces(size, [&](std::uint64_t off, std::uint64_t n) {
        CU_CALL(api, cuMemsetD8, b.get() + off, 0x5a, n);
        CU_CALL(api, cuCtxSynchronize);
    });
    return b;
}

// Pinned host memory, one allocation a piece (pinning gigabytes at once takes the host seconds): the
// piece at `offset` is at(offset).
class PinnedBuffer {
public:
    PinnedBuffer(const DriverApi& api, std::uint64_t size) {
        CU_REQUIRE(api, cuMemFreeHost);
        in_pieces(size, [&](std::uint64_t, std::uint64_t n) {
            pieces_.emplace_back([&api](void* p) { return api.cuMemFreeHost(p); });
            CU_CALL(api, cuMemHostAlloc, pieces_.back().out(), n, 0);  // pinned: its pages exist once it returns
        });
    }
    void* at(std::uint64_t offset) const { return pieces_[offset / kPiece].get(); }

private:
    std::vector<OwnedHandle<void*>> pieces_;
};

OwnedHandle<CUstream> copy_stream(const DriverApi& api) {
    CU_REQUIRE(api, cuStreamDestroy);
    OwnedHandle<CUstream> s([&api](CUstream h) { return api.cuStreamDestroy(h); });
    CU_CALL(api, cuStreamCreate, s.out(), CU_STREAM_NON_BLOCKING);
    return s;
}

OwnedHandle<CUevent> copy_event(const DriverApi& api) {
    CU_REQUIRE(api, cuEventDestroy);
    OwnedHandle<CUevent> e([&api](CUevent h) { return api.cuEventDestroy(h); });
    CU_CALL(api, cuEventCreate, e.out(), CU_EVENT_DEFAULT);
    return e;
}

// Whether the work before `event` has ended, without waiting; throws Error on a failed query.
bool event_ended(const DriverApi& api, CUevent event) {
    CU_REQUIRE(api, cuEventQuery);
    const CUresult r = api.cuEventQuery(event);
    if (r == CUDA_ERROR_NOT_READY) return false;
    check(api, r, "cuEventQuery");
    return true;
}

// What the host does between two questions to the driver about copies under way.
void idle_a_moment() {
    std::this_thread::sleep_for(std::chrono::microseconds(100));
}

// Waits for `event` without blocking in the driver: asks every tenth of a millisecond whether it is
// done, and throws Interrupted between two questions once SIGINT or SIGTERM came.
void wait_event(const DriverApi& api, CUevent event) {
    while (!event_ended(api, event)) {
        check_interrupted();
        idle_a_moment();
    }
}

double seconds_between(const DriverApi& api, CUevent from, CUevent to) {
    wait_event(api, to);
    float ms = 0;
    CU_CALL(api, cuEventElapsedTime, &ms, from, to);
    return ms / 1e3;
}

// Keeps a stream kQueuedSeconds ahead: an event after each piece, and the host waits (interruptibly) for
// the oldest while more than two pieces are in flight and more bytes than the fastest rate its pieces
// have ended at moves in that time (kQueued bytes until a piece has ended, and at most). Two pieces stay
// queued whatever the rate. One host thread that fills two streams (both ways at once) asks room()
// before each piece and push()es, so that it never waits on one stream while the other runs dry.
class Pacer {
public:
    Pacer(const DriverApi& api, CUstream stream) : api_(api), stream_(stream) {}
    // Stopped with pieces in flight: they end before the buffers they copy go (a fraction of a second).
    ~Pacer() {
        if (!queued_.empty()) (void)api_.cuStreamSynchronize(stream_);
    }
    Pacer(const Pacer&) = delete;
    Pacer& operator=(const Pacer&) = delete;
    // Enqueues all of `op`, a copy of `size` bytes, piece by piece.
    void copy(const Enqueue& op, std::uint64_t size) {
        in_pieces(size, [&](std::uint64_t off, std::uint64_t n) { piece(op, off, n); });
    }
    // Enqueues one piece of `op`, then waits until the stream is no further ahead than it may be.
    void piece(const Enqueue& op, std::uint64_t offset, std::uint64_t bytes) {
        push(op, offset, bytes);
        while (over()) retire();
    }
    // Whether the stream may take another piece now, without waiting: pieces that have ended are let go.
    bool room() {
        while (over()) {
            if (!event_ended(api_, queued_.front().event.get())) return false;
            retire();
        }
        return true;
    }
    // Enqueues one piece of `op` without waiting (after room() said yes).
    void push(const Enqueue& op, std::uint64_t offset, std::uint64_t bytes) {
        if (!mark_ && queued_.empty()) first_queued_ = std::chrono::steady_clock::now();
        op(stream_, offset, bytes);
        queued_.push_back({spare_event(), bytes});
        CU_CALL(api_, cuEventRecord, queued_.back().event.get(), stream_);
        in_flight_ += bytes;
    }
    // The pieces queued that have not ended yet, without waiting: those that have are let go.
    std::size_t unfinished() {
        while (!queued_.empty() && event_ended(api_, queued_.front().event.get())) retire();
        return queued_.size();
    }
    // Starts from `bytes_per_second` (a rate the GPU's own clock measured) rather than from the rate its
    // next first piece ends at as the host sees it: a slow host reads that one low, and keeps the stream
    // too short a queue. The stream is idle (drained).
    void expect(double bytes_per_second) {
        fastest_ = bytes_per_second;
        if (mark_) spare_.push_back(std::move(mark_));
    }
    // Waits for everything queued; the stream is then idle, and the host has waited for it (its last
    // piece done, the synchronize returns at once).
    void drain() {
        while (!queued_.empty()) retire();
        CU_CALL(api_, cuStreamSynchronize, stream_);
    }

private:
    struct Queued {
        OwnedHandle<CUevent> event;
        std::uint64_t bytes = 0;
    };
    OwnedHandle<CUevent> spare_event() {
        if (spare_.empty()) return copy_event(api_);
        OwnedHandle<CUevent> e = std::move(spare_.back());
        spare_.pop_back();
        return e;
    }
    // Whether more is queued than the stream needs to stay busy.
    bool over() const { return queued_.size() > 2 && in_flight_ > ahead(); }
    // The bytes to keep in flight.
    std::uint64_t ahead() const {
        if (fastest_ <= 0) return kQueued;
        return std::min<std::uint64_t>(kQueued, static_cast<std::uint64_t>(fastest_ * kQueuedSeconds));
    }
    // Waits for the oldest piece; its rate from the piece before on the GPU's clock, the first piece's
    // from when the host queued it (no event of ours before it: the stream's work stays the copies'): a
    // host that was late to queue a piece only lowers a rate, so the fastest is kept.
    void retire() {
        Queued& front = queued_.front();
        wait_event(api_, front.event.get());
        double seconds = 0;
        if (float ms = 0; mark_ && api_.cuEventElapsedTime(&ms, mark_.get(), front.event.get()) == CUDA_SUCCESS) {
            seconds = static_cast<double>(ms) / 1e3;
        } else if (!mark_) {
            seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - first_queued_).count();
        }
        if (seconds > 0) fastest_ = std::max(fastest_, static_cast<double>(front.bytes) / seconds);
        if (mark_) spare_.push_back(std::move(mark_));
        mark_ = std::move(front.event);
        in_flight_ -= front.bytes;
        queued_.pop_front();
    }

    const DriverApi& api_;
    CUstream stream_;
    std::deque<Queued> queued_;
    std::vector<OwnedHandle<CUevent>> spare_;
    OwnedHandle<CUevent> mark_;                           // the last piece waited for
    std::chrono::steady_clock::time_point first_queued_;  // when the host queued the first piece
    std::uint64_t in_flight_ = 0;
    double fastest_ = 0;  // bytes a second
};

// `iterations` of `op`, a copy of `size` bytes, on one stream after one untimed (the first copy of a
// buffer pays for its mappings): seconds.
double timed_copies(const DriverApi& api, int iterations, std::uint64_t size, const Enqueue& op) {
    const auto stream = copy_stream(api);
    Pacer pace(api, stream.get());
    pace.copy(op, size);
    pace.drain();
    const auto start = copy_event(api);
    const auto end = copy_event(api);
    CU_CALL(api, cuEventRecord, start.get(), stream.get());
    for (int i = 0; i < iterations; ++i) pace.copy(op, size);
    CU_CALL(api, cuEventRecord, end.get(), stream.get());
    return seconds_between(api, start.get(), end.get());
}

// The pieces of `iterations` copies of `size` bytes.
std::uint64_t pieces_of(std::uint64_t size, int iterations) {
    return (size + kPiece - 1) / kPiece * static_cast<std::uint64_t>(iterations);
}

// One stream of copies run together (run_together): its copy, its stream and that stream's context, where
// it is, and the event after its timed pieces.
struct Way {
    CUcontext context = nullptr;  // made current before each of its calls; none: the current one serves
    CUstream stream = nullptr;
    Pacer* pace = nullptr;
    Enqueue op;
    CUevent done = nullptr;  // recorded after its timed pieces
    std::uint64_t next = 0;  // its next piece, counted from the first timed one
    bool ended = false;      // its timed pieces have ended
};

// Queues each way's next timed piece of its copy of `size` bytes whenever its stream has room, so that
// no way waits for another's pieces, and records its `done` after `timed` pieces. A way whose timed
// pieces are queued goes on copying, untimed and two pieces ahead, until every way's have ended, so that
// each is timed while the others run throughout, as nvbandwidth times a copy beside the copies it
// shares its links with. Where the pacers' queues hold every timed piece, all of them are queued, a
// piece of each way in turn, before the host asks the driver anything. `first_queued` (where given) is
// called once every way has queued its first piece. Returns once every way's timed pieces have ended and
// its stream is drained; throws Interrupted between two pieces.
void run_together(const DriverApi& api, std::vector<Way>& ways, std::uint64_t size, std::uint64_t timed,
                  const std::function<void()>& first_queued = {}) {
    const std::uint64_t per_copy = pieces_of(size, 1);
    const auto make_current = [&api](const Way& way) {
        if (way.context != nullptr) CU_CALL(api, cuCtxSetCurrent, way.context);
    };
    bool first = true;
    for (std::size_t copying = ways.size(); copying > 0;) {  // ways whose timed pieces have not ended
        check_interrupted();
        bool queued = false;
        for (Way& way : ways) {
            make_current(way);
            if (way.next >= timed && !way.ended && event_ended(api, way.done)) way.ended = true, --copying;
            const bool untimed = way.next >= timed;
            if (untimed && (copying == (way.ended ? 0 : 1) || way.pace->unfinished() >= 2)) continue;
            if (!way.pace->room()) continue;
            const std::uint64_t off = (way.next % per_copy) * kPiece;
            way.pace->push(way.op, off, std::min(kPiece, size - off));
            if (++way.next == timed) CU_CALL(api, cuEventRecord, way.done, way.stream);
            queued = true;
        }
        if (std::exchange(first, false) && first_queued) first_queued();
        if (!queued) idle_a_moment();
    }
    for (const Way& way : ways) make_current(way), way.pace->drain();
}

// The seconds from one start until each of two streams' timed copies ended.
struct TogetherSeconds {
    double first = 0, second = 0;
};

// `iterations` of `a` on one stream and of `b` on another, both copies of `size` bytes, started together
// after one untimed copy each, each timed while the other runs throughout (run_together).
TogetherSeconds timed_together(const DriverApi& api, int iterations, std::uint64_t size, const Enqueue& a,
                               const Enqueue& b) {
    const auto s1 = copy_stream(api);
    const auto s2 = copy_stream(api);
    Pacer p1(api, s1.get());
    Pacer p2(api, s2.get());
    in_pieces(size, [&](std::uint64_t off, std::uint64_t n) { p1.piece(a, off, n), p2.piece(b, off, n); });
    p1.drain(), p2.drain();
    const auto start = copy_event(api);
    const auto a_done = copy_event(api);
    const auto b_done = copy_event(api);
    CU_CALL(api, cuEventRecord, start.get(), s1.get());
    CU_CALL(api, cuStreamWaitEvent, s2.get(), start.get(), 0);
    std::vector<Way> ways(2);
    ways[0].stream = s1.get(), ways[0].pace = &p1, ways[0].op = a, ways[0].done = a_done.get();
    ways[1].stream = s2.get(), ways[1].pace = &p2, ways[1].op = b, ways[1].done = b_done.get();
    run_together(api, ways, size, pieces_of(size, iterations));
    return {seconds_between(api, start.get(), a_done.get()), seconds_between(api, start.get(), b_done.get())};
}

Enqueue to_device(const DriverApi& api, CUdeviceptr dst, const PinnedBuffer& src) {
    return [&api, dst, &src](CUstream s, std::uint64_t off, std::uint64_t n) {
        CU_CALL(api, cuMemcpyHtoDAsync, dst + off, src.at(off), n, s);
    };
}
Enqueue to_host(const DriverApi& api, const PinnedBuffer& dst, CUdeviceptr src) {
    return [&api, &dst, src](CUstream s, std::uint64_t off, std::uint64_t n) {
        CU_CALL(api, cuMemcpyDtoHAsync, dst.at(off), src + off, n, s);
    };
}
// Between two unified addresses (device memory, or host memory cuMemCreate mapped for the device).
Enqueue unified(const DriverApi& api, CUdeviceptr dst, CUdeviceptr src) {
    return [&api, dst, src](CUstream s, std::uint64_t off, std::uint64_t n) {
        CU_CALL(api, cuMemcpyAsync, dst + off, src + off, n, s);
    };
}

// Host memory of cuMemCreate on NUMA node `node`, mapped and readable and writable by `device`.
struct NumaBuffer {
    AllocationHandle handle;
    std::optional<AddressRange> range;
    std::optional<Mapping> mapping;

    NumaBuffer(const DriverApi& api, int device, int node, std::uint64_t size) {
        CUmemAllocationProp prop{};
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
        prop.location.id = node;
        std::size_t granule = 0;
        CU_CALL(api, cuMemGetAllocationGranularity, &granule, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
        if (granule == 0) granule = 2ULL << 20;
        const std::size_t bytes = (size + granule - 1) / granule * granule;
        CUmemGenericAllocationHandle h{};
        CU_CALL(api, cuMemCreate, &h, bytes, &prop, 0);
        handle = AllocationHandle(api, h);
        range.emplace(api, bytes, granule);
        mapping.emplace(api, range->base(), bytes, handle.get());
        grant_device_access(api, range->base(), bytes, {device});
    }
    CUdeviceptr ptr() const { return range->base(); }
};

// A figure of one direction (h2d, d2h, d2d, peer), with its bytes copied: a d2d figure counts each
// byte read and written, so half its bytes were copied.
CopyFigure copy_figure(CopyPath path, HostMemory host, std::uint64_t bytes, int iterations, double seconds) {
    CopyFigure f;
    f.path = path, f.host = host, f.bytes = bytes, f.iterations = iterations, f.seconds = seconds;
    f.copied.push_back({path, path == CopyPath::device_to_device ? bytes / 2 : bytes, seconds});
    return f;
}

// The host paths from one host buffer: h2d and d2h.
void host_pair(const DriverApi& api, const CopyRequest& r, HostMemory kind, std::optional<int> node, const Enqueue& h2d,
               const Enqueue& d2h, std::vector<CopyFigure>& out) {
    const std::uint64_t bytes = r.size * static_cast<std::uint64_t>(r.iterations);
    out.push_back(
        copy_figure(CopyPath::host_to_device, kind, bytes, r.iterations, timed_copies(api, r.iterations, r.size, h2d)));
    out.back().numa_node = node;
    out.push_back(
        copy_figure(CopyPath::device_to_host, kind, bytes, r.iterations, timed_copies(api, r.iterations, r.size, d2h)));
    out.back().numa_node = node;
}

// h2d and d2h from pageable host memory.
void pageable_pair(const DriverApi& api, const CopyRequest& r, CUdeviceptr dev, std::vector<CopyFigure>& out) {
    const std::uint64_t n = r.size;
    const std::unique_ptr<char[]> page(new (std::nothrow) char[n]);
    if (!page) {
        throw Error(ExitCode::failed, fmt::format("no {} of pageable host memory for the copies", format_size(n)),
                    "copy fewer bytes at a time");
    }
    char* const p = page.get();
    in_pieces(n, [p](std::uint64_t off, std::uint64_t bytes) { std::memset(p + off, 0x5a, bytes); });
    const Enqueue h2d = [&api, dev, p](CUstream s, std::uint64_t off, std::uint64_t bytes) {
        CU_CALL(api, cuMemcpyHtoDAsync, dev + off, p + off, bytes, s);
    };
    const Enqueue d2h = [&api, dev, p](CUstream s, std::uint64_t off, std::uint64_t bytes) {
        CU_CALL(api, cuMemcpyDtoHAsync, p + off, dev + off, bytes, s);
    };
    host_pair(api, r, HostMemory::pageable, std::nullopt, h2d, d2h, out);
}

// h2d and d2h from host memory on NUMA node `node`; a node the driver refuses goes to `refused` where
// the caller collects them, else throws.
void numa_pair(const DriverApi& api, const CopyRequest& r, int device, int node, CUdeviceptr dev,
               std::vector<CopyFigure>& out, std::vector<NumaRefusal>* refused) {
    const std::uint64_t n = r.size;
    std::optional<NumaBuffer> numa;
    try {
        numa.emplace(api, device, node, n);
    } catch (const Error& e) {
        if (refused == nullptr) throw;
        refused->push_back({node, e.problem()});
        return;
    }
    host_pair(api, r, HostMemory::numa, node, unified(api, dev, numa->ptr()), unified(api, numa->ptr(), dev), out);
}

// device -> `peer`, the destination in the peer's memory.
CopyFigure peer_figure(const DriverApi& api, CUdeviceptr src, int peer, std::uint64_t size, int iterations) {
    CUcontext own = nullptr;
    CU_CALL(api, cuCtxGetCurrent, &own);
    const PrimaryContext peer_context(api, peer);
    const auto dst = copy_device_buffer(api, size);
    // The peer's memory is freed with its context current; the copies run in this device's.
    const ScopeExit back([&api, &peer_context] { api.cuCtxSetCurrent(peer_context.get()); });
    CU_CALL(api, cuCtxSetCurrent, own);
    const CUcontext peer_ctx = peer_context.get();
    // Without peer access the driver stages the copy through host memory: the figure would be neither
    // NVLink's nor PCIe's. Enabled here, and disabled again where this enabled it.
    bool enabled_here = false;
    if (api.cuCtxEnablePeerAccess != nullptr) {
        const CUresult r = api.cuCtxEnablePeerAccess(peer_ctx, 0);
        if (r != CUDA_SUCCESS && r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) check(api, r, "cuCtxEnablePeerAccess");
        enabled_here = r == CUDA_SUCCESS;
    }
    const ScopeExit disable([&api, peer_ctx, &enabled_here] {
        if (enabled_here && api.cuCtxDisablePeerAccess != nullptr) api.cuCtxDisablePeerAccess(peer_ctx);
    });
    const CUdeviceptr to = dst.get();
    const double s = timed_copies(api, iterations, size,
                                  [&api, to, peer_ctx, src, own](CUstream st, std::uint64_t off, std::uint64_t n) {
                                      CU_CALL(api, cuMemcpyPeerAsync, to + off, peer_ctx, src + off, own, n, st);
                                  });
    CopyFigure f =
        copy_figure(CopyPath::peer, HostMemory::pinned, size * static_cast<std::uint64_t>(iterations), iterations, s);
    f.peer = peer;
    return f;
}

constexpr auto kPathWords = enum_words<CopyPath>({{CopyPath::host_to_device, "h2d"},
                                                  {CopyPath::device_to_host, "d2h"},
                                                  {CopyPath::both, "both"},
                                                  {CopyPath::device_to_device, "d2d"},
                                                  {CopyPath::peer, "peer"}},
                                                 "?");

constexpr auto kByteCountWords = enum_words<ByteCount>({{ByteCount::copied, "copied"},
                                                        {ByteCount::both_directions, "both_directions"},
                                                        {ByteCount::read_and_written, "read_and_written"}},
                                                       "?");

}  // namespace

// The tables' words are string literals, so data() ends in a NUL.
const char* path_name(CopyPath path) {
    return kPathWords.word(path).data();
}

ByteCount byte_count(CopyPath path) {
    switch (path) {
        case CopyPath::both:
            return ByteCount::both_directions;
        case CopyPath::device_to_device:
            return ByteCount::read_and_written;
        default:
            return ByteCount::copied;
    }
}

const char* count_name(ByteCount count) {
    return kByteCountWords.word(count).data();
}

void measure_copies(const DriverApi& api, int device, const CopyRequest& r, std::vector<CopyFigure>& out,
                    const CopyProgress& progress, std::vector<NumaRefusal>* refused, BindingOutcome* binding) {
    const auto say = [&progress](const std::string& what) {
        if (progress) progress(what);
    };
    std::optional<ThreadBinding> bound;
    std::optional<int> node;
    if (r.placement && r.placement->node) {
        bound.emplace(r.placement->cpus, r.placement->node);
        if (bound->cpus_bound() || bound->memory_bound()) node = r.placement->node;
        if (binding != nullptr) binding->node = node, binding->error = bound->error();
    }
    const std::size_t first = out.size();
    const std::uint64_t n = r.size;
    const std::uint64_t bytes = n * static_cast<std::uint64_t>(r.iterations);
    const auto dev = copy_device_buffer(api, n);
    if (r.host || r.both) {
        const PinnedBuffer host(api, n);
        if (r.host) {
            say("host<->device, pinned");
            host_pair(api, r, HostMemory::pinned, std::nullopt, to_device(api, dev.get(), host),
                      to_host(api, host, dev.get()), out);
        }
        if (r.both) {
            say("both directions at once");
            const auto dev2 = copy_device_buffer(api, n);
            const PinnedBuffer host2(api, n);
            const TogetherSeconds s =
                timed_together(api, r.iterations, n, to_device(api, dev.get(), host), to_host(api, host2, dev2.get()));
            CopyFigure both;
            both.path = CopyPath::both, both.bytes = 2 * bytes, both.iterations = r.iterations;
            both.copied = {{CopyPath::host_to_device, bytes, s.first}, {CopyPath::device_to_host, bytes, s.second}};
            // The two ways' rates summed: the seconds both ways' bytes take at them.
            if (s.first > 0 && s.second > 0) both.seconds = 2 / (1 / s.first + 1 / s.second);
            out.push_back(both);
        }
    }
    if (r.pageable) {
        say("host<->device, pageable");
        pageable_pair(api, r, dev.get(), out);
    }
    for (std::size_t i = first; i < out.size(); ++i) out[i].numa_node = node;  // pinned, pageable: the thread's node
    for (const int numa : r.numa_nodes) {
        say(fmt::format("host<->device, NUMA node {}", numa));
        numa_pair(api, r, device, numa, dev.get(), out, refused);
    }
    if (r.device) {
        say("device->device");
        const auto dev2 = copy_device_buffer(api, n);
        const CUdeviceptr a = dev.get(), b = dev2.get();
        const double s =
            timed_copies(api, r.iterations, n, [&api, a, b](CUstream st, std::uint64_t off, std::uint64_t m) {
                CU_CALL(api, cuMemcpyDtoDAsync, b + off, a + off, m, st);
            });
        out.push_back(copy_figure(CopyPath::device_to_device, HostMemory::pinned, 2 * bytes, r.iterations, s));
    }
    for (const int peer : r.peers) {
        say(fmt::format("GPU {} -> GPU {}", device, peer));
        out.push_back(peer_figure(api, dev.get(), peer, n, r.iterations));
    }
}

namespace {

// One GPU's part of measure_concurrent: its context, buffers, stream and events, how its buffers were
// placed, and the rate each way that its untimed copy ran at alone.
struct ConcurrentPart {
    int device = 0;
    CUcontext context = nullptr;
    std::optional<OwnedHandle<CUdeviceptr>> dev;
    std::optional<PinnedBuffer> host;
    std::optional<OwnedHandle<CUstream>> stream;
    std::optional<Pacer> pacer;  // its copies, queued a piece at a time and waited for interruptibly
    std::optional<OwnedHandle<CUevent>> start, end;
    double to_device_rate = 0, to_host_rate = 0;  // bytes a second, on the GPU's clock
    BindingOutcome binding;
};

// Copies all of `op`, `size` bytes, once through `pace` on `stream` and waits for it: its rate in bytes
// a second on the GPU's clock.
double untimed_copy(const DriverApi& api, Pacer& pace, CUstream stream, const Enqueue& op, std::uint64_t size) {
    const auto from = copy_event(api);
    const auto to = copy_event(api);
    CU_CALL(api, cuEventRecord, from.get(), stream);
    pace.copy(op, size);
    CU_CALL(api, cuEventRecord, to.get(), stream);
    pace.drain();
    const double seconds = seconds_between(api, from.get(), to.get());
    return seconds > 0 ? static_cast<double>(size) / seconds : 0;
}

// Makes a GPU's buffers on its node (the thread bound while they are made), its stream and events, and
// copies once each way untimed, alone; its stream is idle after. The GPU's context is current.
void prepare_part(const DriverApi& api, const CopyRequest& r, const std::optional<HostPlacement>& where,
                  ConcurrentPart& part) {
    std::optional<ThreadBinding> bound;
    if (where && where->node) {
        bound.emplace(where->cpus, where->node);
        if (bound->cpus_bound() || bound->memory_bound()) part.binding.node = where->node;
        part.binding.error = bound->error();
    }
    part.dev.emplace(copy_device_buffer(api, r.size));
    part.host.emplace(api, r.size);
    part.stream.emplace(copy_stream(api));
    part.pacer.emplace(api, part.stream->get());
    part.start.emplace(copy_event(api));
    part.end.emplace(copy_event(api));
    const CUstream s = part.stream->get();
    part.to_device_rate = untimed_copy(api, *part.pacer, s, to_device(api, part.dev->get(), *part.host), r.size);
    part.to_host_rate = untimed_copy(api, *part.pacer, s, to_host(api, *part.host, part.dev->get()), r.size);
}

// A word of page-locked host memory that holds each GPU's stream (cuStreamWaitValue32) until the host
// has queued the first copy on every GPU, so that the GPUs start together: a host thread that the system
// preempts while it queues would otherwise let the first GPUs copy alone for a while, and the GPUs' times
// would depend on the host, not on the links they share. A driver without stream memory operations runs
// the streams as they are filled. Where queueing a copy waits for its stream (compute-sanitizer's
// initcheck checks each copy as it is queued), the host would never reach open(): a watchdog opens the
// gate kGateDeadline after the first hold, as nvbandwidth's spinning kernel gives up after a time.
// open() must come before the streams are waited for, and release() before their contexts go.
class StartGate {
public:
    static constexpr std::chrono::milliseconds kGateDeadline{1000};

    explicit StartGate(const DriverApi& api) : api_(api) {}
    ~StartGate() { release(); }
    StartGate(const StartGate&) = delete;
    StartGate& operator=(const StartGate&) = delete;

    // Holds `stream` (its context current) until the next open(); where the driver cannot, it runs on.
    void hold(CUstream stream) {
        if (!usable_ || api_.cuStreamWaitValue32 == nullptr || api_.cuMemHostGetDevicePointer == nullptr ||
            api_.cuMemHostAlloc == nullptr || api_.cuMemFreeHost == nullptr) {
            return;
        }
        if (!word_) {
            OwnedHandle<void*> w([this](void* p) { return api_.cuMemFreeHost(p); });
            if (api_.cuMemHostAlloc(w.out(), sizeof(std::uint32_t),
                                    CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP) != CUDA_SUCCESS) {
                usable_ = false;
                return;
            }
            __atomic_store_n(static_cast<std::uint32_t*>(w.get()), generation_, __ATOMIC_SEQ_CST);
            word_ = std::move(w);
        }
        std::unique_lock<std::mutex> lock(mutex_);
        CUdeviceptr at = 0;
        usable_ = api_.cuMemHostGetDevicePointer(&at, word_.get(), 0) == CUDA_SUCCESS &&
                  api_.cuStreamWaitValue32(stream, at, generation_ + 1, CU_STREAM_WAIT_VALUE_GEQ) == CUDA_SUCCESS;
        if (!usable_ || held_) return;
        held_ = true;
        std::thread last = std::exchange(
            watchdog_, std::thread([this, round = generation_] {
                std::unique_lock<std::mutex> held(mutex_);
                if (!opened_.wait_for(held, kGateDeadline, [this, round] { return generation_ != round; })) {
                    open_locked();
                }
            }));
        lock.unlock();
        // The last round's watchdog has been told its round is open; it needs the mutex to see it.
        if (last.joinable()) last.join();
    }
    // Lets every held stream go.
    void open() {
        const std::lock_guard<std::mutex> lock(mutex_);
        open_locked();
    }
    // Opens the gate, ends the watchdog and frees the word: once the held streams are waited for.
    void release() {
        open();
        if (watchdog_.joinable()) watchdog_.join();
        word_ = OwnedHandle<void*>();
    }

private:
    void open_locked() {
        if (!held_) return;
        __atomic_store_n(static_cast<std::uint32_t*>(word_.get()), ++generation_, __ATOMIC_SEQ_CST);
        held_ = false;
        opened_.notify_all();
    }

    const DriverApi& api_;
    OwnedHandle<void*> word_;
    std::mutex mutex_;
    std::condition_variable opened_;
    std::thread watchdog_;
    std::uint32_t generation_ = 0;  // the word's value; a hold waits for the next
    bool usable_ = true;
    bool held_ = false;
};

// One direction on every GPU at once (run_together): every GPU's stream held at the gate with its start
// event behind it, the gate opened once every GPU has queued its first piece, then each GPU's time from
// its start event to the end of its timed copies, every GPU copying until all of them have ended. Each
// GPU's stream is kept a quarter second ahead at its share of the rate it copied at alone (the GPUs may
// all share one link), so that a stop waits for a fraction of a second of copies, on any link.
void timed_all(const DriverApi& api, const CopyRequest& r, CopyPath path, std::vector<ConcurrentPart>& parts,
               StartGate& gate, std::vector<std::vector<CopyFigure>>& out) {
    check_interrupted();
    std::vector<Way> ways(parts.size());
    for (std::size_t i = 0; i < parts.size(); ++i) {
        ConcurrentPart& p = parts[i];
        CU_CALL(api, cuCtxSetCurrent, p.context);
        const bool h2d = path == CopyPath::host_to_device;
        p.pacer->expect((h2d ? p.to_device_rate : p.to_host_rate) / static_cast<double>(parts.size()));
        gate.hold(p.stream->get());
        CU_CALL(api, cuEventRecord, p.start->get(), p.stream->get());
        Way& way = ways[i];
        way.context = p.context, way.stream = p.stream->get(), way.done = p.end->get(), way.pace = &*p.pacer;
        way.op = h2d ? to_device(api, p.dev->get(), *p.host) : to_host(api, *p.host, p.dev->get());
    }
    run_together(api, ways, r.size, pieces_of(r.size, r.iterations), [&gate] { gate.open(); });
    const std::uint64_t bytes = r.size * static_cast<std::uint64_t>(r.iterations);
    for (std::size_t i = 0; i < parts.size(); ++i) {
        CU_CALL(api, cuCtxSetCurrent, parts[i].context);
        CopyFigure f = copy_figure(path, HostMemory::pinned, bytes, r.iterations,
                                   seconds_between(api, parts[i].start->get(), parts[i].end->get()));
        f.concurrent = true, f.numa_node = parts[i].binding.node;
        out[i].push_back(f);
    }
}

}  // namespace

std::vector<std::vector<CopyFigure>> measure_concurrent(const DriverApi& api, const std::vector<int>& devices,
                                                        const CopyRequest& r,
                                                        const std::vector<std::optional<HostPlacement>>& placements,
                                                        std::vector<BindingOutcome>* bindings) {
    std::list<PrimaryContext> contexts;  // retained, released last, in the reverse of their making
    std::vector<ConcurrentPart> parts(devices.size());
    StartGate gate(api);  // its word outlives the streams' waits, and the contexts outlive it
    const ScopeExit release([&api, &parts, &contexts, &gate] {
        gate.open();  // a stop or an error between hold and open leaves no stream held
        for (auto p = parts.rbegin(); p != parts.rend(); ++p) {
            if (p->context != nullptr) api.cuCtxSetCurrent(p->context);
            if (p->stream) (void)api.cuStreamSynchronize(p->stream->get());  // stopped: what is queued ends first
            p->end.reset(), p->start.reset(), p->pacer.reset(), p->stream.reset(), p->host.reset(), p->dev.reset();
        }
        gate.release();  // its word, before the context it was made in goes
        while (!contexts.empty()) contexts.pop_back();
    });
    for (std::size_t i = 0; i < devices.size(); ++i) {
        contexts.emplace_back(api, devices[i]);
        parts[i].device = devices[i], parts[i].context = contexts.back().get();
        prepare_part(api, r, i < placements.size() ? placements[i] : std::nullopt, parts[i]);
    }
    std::vector<std::vector<CopyFigure>> out(devices.size());
    timed_all(api, r, CopyPath::host_to_device, parts, gate, out);
    timed_all(api, r, CopyPath::device_to_host, parts, gate, out);
    if (bindings != nullptr) {
        for (const ConcurrentPart& p : parts) bindings->push_back(p.binding);
    }
    return out;
}

CopyFigure copy_while(const DriverApi& api, std::uint64_t size, int batch, double seconds,
                      const std::function<bool()>& sample) {
    const auto dev = copy_device_buffer(api, size);
    const PinnedBuffer host(api, size);
    const auto stream = copy_stream(api);
    const auto start = copy_event(api);
    const Enqueue h2d = to_device(api, dev.get(), host);
    std::deque<OwnedHandle<CUevent>> queued;  // the end of each batch in flight
    int copies = 0;
    const auto queue_batch = [&] {
        for (int i = 0; i < batch; ++i) {
            in_pieces(size, [&](std::uint64_t off, std::uint64_t n) { h2d(stream.get(), off, n); });
        }
        copies += batch;
        queued.push_back(copy_event(api));
        CU_CALL(api, cuEventRecord, queued.back().get(), stream.get());
    };
    CU_CALL(api, cuEventRecord, start.get(), stream.get());
    queue_batch();
    queue_batch();
    const Stopwatch watch;
    while (!sample() && watch.seconds() < seconds) {
        if (event_ended(api, queued.front().get())) {
            queued.pop_front();
            queue_batch();
        }
        std::this_thread::sleep_for(std::chrono::microseconds(250));
    }
    const double s = seconds_between(api, start.get(), queued.back().get());
    return copy_figure(CopyPath::host_to_device, HostMemory::pinned, size * static_cast<std::uint64_t>(copies), copies,
                       s);
}

std::vector<int> host_numa_nodes(const std::string& sysroot) {
    const auto text = try_read_text_file(sysroot + "/sys/devices/system/node/has_memory");
    if (!text) return {};
    std::string list = *text;
    while (!list.empty() && (list.back() == '\n' || list.back() == ' ')) list.pop_back();
    try {
        return parse_index_list(list, 4096, "NUMA node", false);
    } catch (const std::exception&) {
        return {};
    }
}

}  // namespace cumemctl::gpu
