// A call that may never return (a library call waiting on a peer that is gone), made on a thread of its
// own so that the caller waits at most a given time.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

namespace cumemctl {

// Runs `work` (which must not throw) on a thread of its own and waits at most `timeout`: its result, or
// nullopt when it did not return in time. The thread is then left running, detached, so whatever
// `work` uses must outlive the process (the caller leaks it rather than destroy it under the thread).
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
    if (!state->done_cv.wait_for(lock, timeout, [&] { return state->value.has_value(); })) return std::nullopt;
    return std::move(state->value);
}

}  // namespace cumemctl
