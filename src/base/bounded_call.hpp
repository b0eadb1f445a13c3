// A call that may never return (a library call waiting on a peer that is gone), made on a thread of its
// own so that the caller waits at most a given time.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

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

// Runs each of `works` (which must not throw) at once, each on a thread of its own, and waits at most
// `timeout` for all of them: their results in order, nullopt for each that did not return in time (its
// thread left running, detached, as call_within leaves it).
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
    state->done_cv.wait_for(lock, timeout, [&] { return state->left == 0; });
    return state->values;  // a copy: a late thread may still write into the state's own
}

}  // namespace cumemctl
