// The fake driver's copy-time model (fake_copy.hpp): the model's clock, streams' ready times, each
// device's link, the rates of the profile's "copy" object, and the link state the fake NVML reads.
#include "fake_copy.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fake_context.hpp"
#include "fake_locality.hpp"
#include "fake_memory.hpp"

namespace fake {
namespace copy_model {
namespace {

long long steady_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// A host word that holds the streams (cuStreamWaitValue32) until it meets its condition.
struct Gate {
    const std::uint32_t* word = nullptr;
    std::uint32_t value = 0;
    unsigned op = CU_STREAM_WAIT_VALUE_GEQ;
    bool open() const {
        const std::uint32_t v = __atomic_load_n(word, __ATOMIC_ACQUIRE);
        switch (op) {
            case CU_STREAM_WAIT_VALUE_EQ:
                return v == value;
            case CU_STREAM_WAIT_VALUE_AND:
                return (v & value) != 0;
            case CU_STREAM_WAIT_VALUE_NOR:
                return ~(v | value) != 0;
            default:  // GEQ, cyclic as the driver's
                return static_cast<std::int32_t>(v - value) >= 0;
        }
    }
};

// The clock: paused while at least one ModelPause lives, or a gate is shut (the gates together count as
// one pause).
struct Clock {
    std::mutex mutex;
    long long paused = 0;       // ns paused before the pause under way, if any
    long long pause_start = 0;  // when the pause under way began
    int pauses = 0;             // ModelPause objects alive now, and 1 while any gate is shut
    std::vector<Gate> gates;    // shut
};
Clock& model_clock() {
    static auto* c = new Clock;  // never destroyed: entry points may run during exit
    return *c;
}

void pause(Clock& c, long long now) {
    if (c.pauses++ == 0) c.pause_start = now;
}
void resume(Clock& c, long long now) {
    if (--c.pauses == 0) c.paused += now - c.pause_start;
}
// Drops the gates that `drop` picks; the clock runs again once none is left. Caller holds c.mutex.
template <class Drop>
void drop_gates(Clock& c, long long now, Drop&& drop) {
    if (c.gates.empty()) return;
    std::erase_if(c.gates, drop);
    if (c.gates.empty()) resume(c, now);
}

// What a device's link carries: h2d and d2h (PCIe or C2C), d2d (its memory), peer (to another device).
enum Channel { kH2d, kD2h, kD2d, kPeer, kChannels };

// One copy under way or to come on a link.
struct Transfer {
    long long start = 0;
    long long end = 0;
    Channel channel = kH2d;
};

// A device's link: when each channel is next free, and its copies that have not yet been counted done.
struct Link {
    long long channel_ready[kChannels] = {};
    std::vector<Transfer> copies;
    unsigned long long done = 0;
    unsigned long long host_copies = 0;  // h2d and d2h copies enqueued so far (noisy_copies)
};

// Guarded by one mutex (taken after state().mutex where both are held, never the other way round).
struct Model {
    std::mutex mutex;
    std::map<CUstream, std::pair<int, long long>> streams;  // made stream -> (device, ready)
    std::map<int, long long> null_ready;                    // device -> its null stream's ready time
    std::set<const long long*> queued;  // the ready times of streams the host has not waited for since work
    // The streams with copies the host has not waited for, and the links (UUIDs) they touch: such a
    // link is busy, as a real one is while a driver's queue holds its copies.
    std::map<const long long*, std::set<std::string>> copying;
    std::map<std::string, Link> links;  // by device UUID (32 hex digits)
    std::map<int, Link> uplinks;        // by the profile's copy.uplink: when its h2d and d2h are next free
};
Model& model() {
    static auto* m = new Model;
    return *m;
}

bool is_null_stream(CUstream stream) {
    return stream == nullptr || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD;
}

// The ready time of a stream: made, or the null stream of `device` (the current context's where -1);
// nullptr for the null stream without a device or a handle that is not a stream. Caller holds the
// model's mutex.
long long* ready_of(CUstream stream, int device = -1) {
    Model& m = model();
    if (is_null_stream(stream)) {
        const int dev = device >= 0 ? device : current_context_device();
        return dev < 0 ? nullptr : &m.null_ready[dev];
    }
    const auto it = m.streams.find(stream);
    return it == m.streams.end() ? nullptr : &it->second.second;
}

// Counts the copies that have ended as done and drops them. Caller holds the model's mutex.
void settle(Link& link, long long now) {
    const auto ended =
        std::stable_partition(link.copies.begin(), link.copies.end(), [now](const Transfer& s) { return s.end > now; });
    link.done += static_cast<unsigned long long>(link.copies.end() - ended);
    link.copies.erase(ended, link.copies.end());
}

[[noreturn]] void bad_profile(const std::string& why) {
    std::fprintf(stderr, "fakecuda: profile: %s\n", why.c_str());
    std::abort();
}

// A device's rates, from its profile's "copy" object (fake_copy.hpp), in bytes a nanosecond.
struct Rates {
    double h2d = 55.0, d2h = 55.5, both = 101.0, d2d = 2050.0, pageable_h2d = 20.0, pageable_d2h = 18.0;
    double remote_numa_factor = 0.7, peer = 350.0;
    double noisy_copies = 0, noisy_factor = 0.25;
    double uplink = 0;  // the PCIe switch whose one uplink the device shares with the others of that number
};

Rates rates_of(int ordinal) {
    Rates r;
    const Device* d = device(ordinal);
    if (d == nullptr) return r;
    const auto it = d->extra.find("copy");
    if (it == d->extra.end()) return r;
    if (!it->is_object()) bad_profile("device " + std::to_string(ordinal) + "'s \"copy\" is not an object");
    const std::pair<const char*, double*> fields[] = {
        {"h2d_gbps", &r.h2d},
        {"d2h_gbps", &r.d2h},
        {"both_gbps", &r.both},
        {"d2d_gbps", &r.d2d},
        {"pageable_h2d_gbps", &r.pageable_h2d},
        {"pageable_d2h_gbps", &r.pageable_d2h},
        {"remote_numa_factor", &r.remote_numa_factor},
        {"peer_gbps", &r.peer},
        {"noisy_copies", &r.noisy_copies},
        {"noisy_factor", &r.noisy_factor},
        {"uplink", &r.uplink},
    };
    for (const auto& [key, field] : fields) {
        if (!it->contains(key)) continue;
        const auto& v = (*it)[key];
        if (!v.is_number() || v.get<double>() <= 0) {
            bad_profile("device " + std::to_string(ordinal) + "'s copy." + key + " must be a number above 0, not " +
                        v.dump());
        }
        *field = v.get<double>();
    }
    for (const auto& item : it->items()) {
        const std::string& key = item.key();
        const bool known =
            std::any_of(std::begin(fields), std::end(fields), [&key](const auto& f) { return key == f.first; });
        if (!known) bad_profile("device " + std::to_string(ordinal) + "'s copy has no field " + key);
    }
    return r;
}

// Whether host memory on `numa` is remote to a device: both nodes known and different.
bool remote_numa(int numa, int ordinal) {
    const Device* d = device(ordinal);
    if (numa < 0 || d == nullptr) return false;
    const auto it = d->attrs.find(CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID);
    return it != d->attrs.end() && it->second >= 0 && it->second != numa;
}

// How one copy runs: the link whose channel carries it (device -1: none, no time), a second device whose
// link it also touches, its rate alone and its rate beside a copy the other way (bytes a nanosecond).
struct Plan {
    int device = -1;
    int other = -1;
    Channel channel = kH2d;
    double rate = 0;
    double shared = 0;
};

Plan plan_copy(const Place& to, const Place& from) {
    Plan p;
    if (from.device < 0 && to.device >= 0) {  // host -> device
        const Rates r = rates_of(to.device);
        const double base = from.pinned ? r.h2d : r.pageable_h2d;
        const double factor = remote_numa(from.numa, to.device) ? r.remote_numa_factor : 1.0;
        p = {to.device, -1, kH2d, base * factor, std::min(base, r.both / 2) * factor};
    } else if (from.device >= 0 && to.device < 0) {  // device -> host
        const Rates r = rates_of(from.device);
        const double base = to.pinned ? r.d2h : r.pageable_d2h;
        const double factor = remote_numa(to.numa, from.device) ? r.remote_numa_factor : 1.0;
        p = {from.device, -1, kD2h, base * factor, std::min(base, r.both / 2) * factor};
    } else if (from.device >= 0 && from.device == to.device) {
        const double rate = rates_of(from.device).d2d;
        p = {from.device, -1, kD2d, rate, rate};
    } else if (from.device >= 0) {  // between two devices
        const Rates a = rates_of(from.device);
        const bool peer = can_access_peer(from.device, to.device) || can_access_peer(to.device, from.device);
        const double rate = peer ? a.peer : 1.0 / (1.0 / a.d2h + 1.0 / rates_of(to.device).h2d);
        p = {from.device, to.device, kPeer, rate, rate};
    }
    return p;
}

// The end of the copies the other way that the link carries from `start` on without a break; `start`
// where it carries none then. Each channel's copies are in the order they run.
long long other_way_until(const Link& link, Channel channel, long long start) {
    const Channel other = channel == kH2d ? kD2h : kH2d;
    long long until = start;
    for (const Transfer& s : link.copies) {
        if (s.channel == other && s.start <= until && s.end > until) until = s.end;
    }
    return until;
}

std::string uuid_of(int ordinal) {
    const Device* d = device(ordinal);
    return d == nullptr ? std::string() : d->uuid_hex;
}

}  // namespace
}  // namespace copy_model

long long model_now_ns() {
    copy_model::Clock& c = copy_model::model_clock();
    std::lock_guard<std::mutex> lock(c.mutex);
    const long long now = copy_model::steady_ns();
    copy_model::drop_gates(c, now, [](const copy_model::Gate& g) { return g.open(); });
    return now - c.paused - (c.pauses > 0 ? now - c.pause_start : 0);
}

ModelPause::ModelPause() {
    copy_model::Clock& c = copy_model::model_clock();
    std::lock_guard<std::mutex> lock(c.mutex);
    copy_model::pause(c, copy_model::steady_ns());
}

ModelPause::~ModelPause() {
    copy_model::Clock& c = copy_model::model_clock();
    std::lock_guard<std::mutex> lock(c.mutex);
    copy_model::resume(c, copy_model::steady_ns());
}

void hold_streams_until(const std::uint32_t* word, std::uint32_t value, unsigned op) {
    copy_model::Clock& c = copy_model::model_clock();
    std::lock_guard<std::mutex> lock(c.mutex);
    const copy_model::Gate gate{word, value, op};
    if (gate.open()) return;
    if (c.gates.empty()) copy_model::pause(c, copy_model::steady_ns());
    c.gates.push_back(gate);
}

void forget_gates(std::uintptr_t begin, std::uintptr_t end) {
    copy_model::Clock& c = copy_model::model_clock();
    std::lock_guard<std::mutex> lock(c.mutex);
    copy_model::drop_gates(c, copy_model::steady_ns(), [begin, end](const copy_model::Gate& g) {
        const auto at = reinterpret_cast<std::uintptr_t>(g.word);
        return at >= begin && at < end;
    });
}

void sleep_until_model(long long t) {
    for (long long now = model_now_ns(); now < t; now = model_now_ns()) {
        std::this_thread::sleep_for(std::chrono::nanoseconds(t - now));
    }
}

void add_stream(CUstream stream, int device) {
    std::lock_guard<std::mutex> lock(copy_model::model().mutex);
    copy_model::model().streams[stream] = {device, 0};
    copy_model::model().queued.erase(&copy_model::model().streams[stream].second);
}

bool remove_stream(CUstream stream) {
    std::lock_guard<std::mutex> lock(copy_model::model().mutex);
    copy_model::Model& m = copy_model::model();
    const auto it = m.streams.find(stream);
    if (it == m.streams.end()) return false;
    m.queued.erase(&it->second.second);
    m.copying.erase(&it->second.second);
    m.streams.erase(it);
    return true;
}

bool known_stream(CUstream stream) {
    std::lock_guard<std::mutex> lock(copy_model::model().mutex);
    return copy_model::is_null_stream(stream) || copy_model::model().streams.count(stream) == 1;
}

long long stream_ready(CUstream stream) {
    std::lock_guard<std::mutex> lock(copy_model::model().mutex);
    const long long* ready = copy_model::ready_of(stream);
    return ready == nullptr ? 0 : *ready;
}

void stream_wait(CUstream stream, long long t) {
    std::lock_guard<std::mutex> lock(copy_model::model().mutex);
    if (long long* ready = copy_model::ready_of(stream)) {
        *ready = std::max(*ready, t);
        copy_model::model().queued.insert(ready);
    }
}

void event_waited(CUstream stream, int device, long long at) {
    std::lock_guard<std::mutex> lock(copy_model::model().mutex);
    copy_model::Model& m = copy_model::model();
    long long* ready = copy_model::ready_of(stream, device);
    if (ready == nullptr || *ready > at) return;
    m.queued.erase(ready);
    m.copying.erase(ready);
}

long long stream_mark(CUstream stream) {
    std::lock_guard<std::mutex> lock(copy_model::model().mutex);
    long long* ready = copy_model::ready_of(stream);
    const long long now = model_now_ns();
    if (ready == nullptr) return now;
    if (copy_model::model().queued.insert(ready).second) *ready = std::max(*ready, now);
    return *ready;
}

void stream_waited(CUstream stream, int device) {
    std::lock_guard<std::mutex> lock(copy_model::model().mutex);
    copy_model::Model& m = copy_model::model();
    const auto forget = [&m](const long long* ready) {
        m.queued.erase(ready);
        m.copying.erase(ready);
    };
    if (device < 0) {
        if (long long* ready = copy_model::ready_of(stream)) forget(ready);
        return;
    }
    if (m.null_ready.count(device) == 1) forget(&m.null_ready[device]);
    for (auto& [s, st] : m.streams) {
        if (st.first == device) forget(&st.second);
    }
}

long long device_ready(int device) {
    std::lock_guard<std::mutex> lock(copy_model::model().mutex);
    copy_model::Model& m = copy_model::model();
    long long ready = m.null_ready.count(device) == 1 ? m.null_ready[device] : 0;
    for (const auto& [stream, s] : m.streams) {
        if (s.first == device) ready = std::max(ready, s.second);
    }
    return ready;
}

CUresult locate(CUdeviceptr ptr, std::size_t size, Place& place) {
    const auto p = static_cast<std::uintptr_t>(ptr);
    place = Place{};
    int owner = -1;
    switch (linear_span(p, size, owner)) {
        case fake::Span::overruns:
            return CUDA_ERROR_INVALID_VALUE;
        case fake::Span::inside:
            if (!valid_linear_range(p, size, -1)) return CUDA_ERROR_INVALID_VALUE;
            place.device = owner;
            place.pinned = owner < 0;  // a host pool's block
            return CUDA_SUCCESS;
        case fake::Span::none:
            break;
    }
    if (reservation_at(ptr) != nullptr) {
        if (!valid_device_range(ptr, size, -1)) return CUDA_ERROR_INVALID_VALUE;
        const Allocation* a = allocation_at(ptr, nullptr);
        if (a == nullptr) return CUDA_ERROR_INVALID_VALUE;
        place.device = location_device(a->prop.location);
        place.pinned = place.device < 0;
        if (a->prop.location.type == CU_MEM_LOCATION_TYPE_HOST_NUMA) place.numa = a->prop.location.id;
        return CUDA_SUCCESS;
    }
    switch (pinned_host_span(p, size)) {
        case fake::Span::overruns:
            return CUDA_ERROR_INVALID_VALUE;
        case fake::Span::inside:
            place.pinned = true;
            place.numa = pinned_host_node(p);
            return CUDA_SUCCESS;
        case fake::Span::none:
            break;
    }
    return CUDA_SUCCESS;  // pageable host memory
}

void enqueue_copy(CUdeviceptr dst, const Place& to, CUdeviceptr src, const Place& from, std::size_t size,
                  CUstream stream) {
    copy_model::Plan plan = copy_model::plan_copy(to, from);
    const std::string uuid = copy_model::uuid_of(plan.device);
    const std::string other_uuid = copy_model::uuid_of(plan.other);
    const copy_model::Rates noise = copy_model::rates_of(plan.device);  // read before the model's lock
    {
        std::lock_guard<std::mutex> lock(copy_model::model().mutex);
        const long long now = model_now_ns();
        long long* ready = copy_model::ready_of(stream);
        // Behind the work queued before it (stream_mark), else no sooner than now.
        const bool behind = ready != nullptr && !copy_model::model().queued.insert(ready).second;
        long long start = behind ? *ready : std::max(now, ready == nullptr ? 0 : *ready);
        long long end = start;
        if (plan.device >= 0 && size > 0) {
            copy_model::Link& link = copy_model::model().links[uuid];
            copy_model::settle(link, now);
            start = std::max(start, link.channel_ready[plan.channel]);
            const bool host_channel = plan.channel == copy_model::kH2d || plan.channel == copy_model::kD2h;
            copy_model::Link* uplink = host_channel && noise.uplink > 0
                                           ? &copy_model::model().uplinks[static_cast<int>(noise.uplink)]
                                           : nullptr;
            if (uplink != nullptr) start = std::max(start, uplink->channel_ready[plan.channel]);
            const auto bytes = static_cast<double>(size);
            double ns = bytes / plan.rate;
            if (plan.channel == copy_model::kH2d || plan.channel == copy_model::kD2h) {
                if (static_cast<double>(link.host_copies++) < noise.noisy_copies) {
                    plan.rate *= noise.noisy_factor, plan.shared *= noise.noisy_factor;
                    ns = bytes / plan.rate;
                }
                const long long until = copy_model::other_way_until(link, plan.channel, start);
                const double beside = static_cast<double>(until - start) * plan.shared;  // bytes moved beside it
                ns = bytes <= beside ? bytes / plan.shared
                                     : static_cast<double>(until - start) + (bytes - beside) / plan.rate;
            }
            end = start + std::max(1LL, static_cast<long long>(ns));
            link.channel_ready[plan.channel] = end;
            if (uplink != nullptr) uplink->channel_ready[plan.channel] = end;
            link.copies.push_back({start, end, plan.channel});
            if (plan.other >= 0) {
                copy_model::Link& other = copy_model::model().links[other_uuid];
                copy_model::settle(other, now);
                other.copies.push_back({start, end, plan.channel});
            }
        }
        if (ready != nullptr) {
            *ready = end;
            if (plan.device >= 0) copy_model::model().copying[ready].insert(uuid);
            if (plan.other >= 0) copy_model::model().copying[ready].insert(other_uuid);
        }
    }
    const ModelPause moving;
    std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), size);
}

}  // namespace fake

// The link state of the device whose UUID is `uuid_hex` (32 hex digits, as the profile gives it) for
// the fake NVML: whether a copy that touches its memory is under way now or queued (the host has not
// waited for its stream), and how many have ended.
// Returns 0 for a device that has carried no copy (idle, none done), 1 otherwise.
extern "C" __attribute__((visibility("default"))) int fakecuda_link_state(const char* uuid_hex, int* busy,
                                                                          unsigned long long* done) {
    namespace cm = fake::copy_model;
    if (busy != nullptr) *busy = 0;
    if (done != nullptr) *done = 0;
    if (uuid_hex == nullptr) return 0;
    std::lock_guard<std::mutex> lock(cm::model().mutex);
    const auto it = cm::model().links.find(uuid_hex);
    if (it == cm::model().links.end()) return 0;
    const long long now = fake::model_now_ns();
    cm::settle(it->second, now);
    if (busy != nullptr) {
        const bool in_flight = std::any_of(it->second.copies.begin(), it->second.copies.end(),
                                           [now](const cm::Transfer& s) { return s.start <= now; });
        const bool queued = std::any_of(cm::model().copying.begin(), cm::model().copying.end(),
                                        [uuid_hex](const auto& c) { return c.second.count(uuid_hex) == 1; });
        *busy = in_flight || queued ? 1 : 0;
    }
    if (done != nullptr) *done = it->second.done;
    return 1;
}
