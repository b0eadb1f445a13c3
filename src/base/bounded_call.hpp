// A call that may never return (a library call waiting on a peer that is gone), made on a thread of its
// own so that the caller waits at most a given time.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "base/interrupt.hpp"

namespace cumemctl {

// Whether a call of this process was given up: its thread still runs in the library it called, so the
// process must end without unwinding (no destructor or library finaliser may run under it: main ends
// with _Exit then), and the library must never be freed.
inline std::atomic<bool>& calls_abandoned_flag() {
    static std::atomic<bool> flag{false};
    return flag;
}
inline bool calls_abandoned() {
    return calls_abandoned_flag().load();
}

namespace detail {

// Waits on `cv` until `done()` or `timeout` has passed, in slices, so that SIGINT or SIGTERM stops the
// wait at once: the calls still running are given up and Interrupted is thrown. True when done.
template <class Done>
bool wait_bounded(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, std::chrono::milliseconds timeout,
                  Done done) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        const auto slice = std::min(deadline, std::chrono::steady_clock::now() + std::chrono::milliseconds(100));
        if (cv.wait_until(lock, slice, done)) return true;
        if (interrupt_signal() != 0) {
            calls_abandoned_flag().store(true);
            lock.unlock();
            check_interrupted();
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            calls_abandoned_flag().store(true);
            return false;
        }
    }
}

}  // namespace detail

// Runs `work` (which must not throw) on a thread of its own and waits at most `timeout`: its result, or
// nullopt when it did not return in time. The thread is then left running, detached, so whatever
// `work` uses must outlive the process (the caller leaks it rather than destroy it under the thread),
// and calls_abandoned() is true from then on. Throws Interrupted when SIGINT or SIGTERM comes first
// (the call given up the same way).
template <class T, class F>
std::optional<T> call_within(std::chrono::milliseconds timeout, F work) {
    struct State {
        std::mutex mutex;
        std::condition_variable done_cv;
        std::optional<T> value;
    };
    auto state = std::make_shared<State>();
    std::thread([state, work = std::move(work)]() mutable {
        T value = work();
        const std::lock_guard lock(state->mutex);
        state->value = std::move(value);
        state->done_cv.notify_all();
    }).detach();
    std::unique_lock lock(state->mutex);
    if (!detail::wait_bounded(lock, state->done_cv, timeout, [&] { return state->value.has_value(); })) {
        return std::nullopt;
    }
    return std::move(state->value);
}

// Runs each of `works` (which must not throw) at once, each on a thread of its own, and waits at most
// `timeout` for all of them: their results in order, nullopt for each that did not return in time
// (given up as call_within gives a call up). Throws std::system_error where a thread cannot be started
// (those started run on), and Interrupted as call_within does.
template <class T>
std::vector<std::optional<T>> call_all_within(std::chrono::milliseconds timeout,
                                              std::vector<std::function<T()>> works) {
    struct State {
        std::mutex mutex;
        std::condition_variable done_cv;
        std::vector<std::optional<T>> values;
        std::size_t left = 0;
    };
    auto state = std::make_shared<State>();
    state->values.resize(works.size());
    state->left = works.size();
    for (std::size_t i = 0; i < works.size(); ++i) {
        std::thread([state, i, work = std::move(works[i])]() mutable {
            T value = work();
            const std::lock_guard lock(state->mutex);
            state->values[i] = std::move(value);
            --state->left;
            state->done_cv.notify_all();
        }).detach();
    }
    std::unique_lock lock(state->mutex);
    detail::wait_bounded(lock, state->done_cv, timeout, [&] { return state->left == 0; });
    return state->values;  // a copy: a late thread may still write into the state's own
}

}  // namespace cumemctl
