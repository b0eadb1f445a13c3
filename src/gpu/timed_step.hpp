// Timed steps (TimedStep): what an operation did, one driver call (or small group of calls) at a time, how long
// each took, and which one failed. create and its import check report their work this way.
#pragma once

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "util/stopwatch.hpp"

namespace cumemctl {

// One step: a short name ("create"), the driver call it makes ("cuMemCreate"), its duration, and
// whether it worked.
struct TimedStep {
    std::string name;
    std::string call;
    double seconds = 0;
    bool ok = true;
};

// Runs `fn` as a step and appends it to `steps`. When fn throws Error, the step is recorded as failed,
// `on_error(problem)` may add a diagnosis, and the error is rethrown. Returns what fn returns.
template <class Fn, class OnError>
auto timed_step(std::vector<TimedStep>& steps, std::string name, std::string call, Fn&& fn, OnError&& on_error)
    -> decltype(fn()) {
    Stopwatch watch;
    try {
        if constexpr (std::is_void_v<decltype(fn())>) {
            fn();
            steps.push_back({std::move(name), std::move(call), watch.seconds(), true});
        } else {
            auto value = fn();
            steps.push_back({std::move(name), std::move(call), watch.seconds(), true});
            return value;
        }
    } catch (Error& e) {
        steps.push_back({std::move(name), std::move(call), watch.seconds(), false});
        on_error(e.problem());
        throw;
    }
}

// A step as JSON: {"step", "call", "seconds", "ok"}; and back (for a child process's report).
nlohmann::json to_json(const TimedStep& step);
TimedStep step_from_json(const nlohmann::json& j);

}  // namespace cumemctl
