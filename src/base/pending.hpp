// What a thread is waiting on right now: the driver or NVML call in flight, or a second process's answer.
// A thread that is to be watched (doctor's check threads under its time budget) names a slot; the seams'
// watched tables and the waits for second processes fill it. So that a run that must answer before a
// call returns can say which call never did.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace cumemctl {

// One thread's wait: what (a string literal: an entry point's name) and since when (steady clock, ns);
// null `what` when the thread waits on nothing the seams know.
struct PendingSlot {
    std::atomic<const char*> what{nullptr};
    std::atomic<std::int64_t> since_ns{0};
};

// Makes `slot` the calling thread's (nullptr: none); every Pending on the thread fills it.
void watch_this_thread(PendingSlot* slot) noexcept;

// The steady clock in nanoseconds, as PendingSlot::since_ns counts it.
std::int64_t pending_clock_ns() noexcept;

// Names what the thread waits on from here to the end of the scope (nested scopes restore the outer one).
class Pending {
public:
    explicit Pending(const char* what) noexcept;
    ~Pending();
    Pending(const Pending&) = delete;
    Pending& operator=(const Pending&) = delete;

private:
    PendingSlot* slot_;
    const char* outer_ = nullptr;
    std::int64_t outer_since_ = 0;
};

// The trampoline of a watched table (cuda/watched_api, nvml/watched_api): names the entry point `Name`
// as pending, then calls the real table's member `Member` (the table at `*Table`, filled once before use).
template <auto* Table, class Fn>
struct WatchedCall;

template <auto* Table, class R, class... Args>
struct WatchedCall<Table, R (*)(Args...)> {
    template <auto Member, const char* Name>
    static R call(Args... args) {
        const Pending pending(Name);
        return ((*Table).*Member)(args...);
    }
};

}  // namespace cumemctl
