// The one step recorder. Steps are the safe points of a stop request: `time`, `attempt` and `call`
// throw Interrupted (base/interrupt) before they start once SIGINT or SIGTERM came; `undo` never does.
// It runs work as steps and records each with its time and result, in three
// styles that every operation shares: `time` (the work throws Error, which is diagnosed, recorded and
// rethrown), `attempt` (the work returns a detail; a failure is recorded, the first problem kept and
// false returned) and `call`/`undo`/`note` (one driver entry point; an undo never throws and keeps its
// failure for the report).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cuda/driver_call.hpp"
#include "base/error.hpp"
#include "base/interrupt.hpp"
#include "steps/step.hpp"
#include "util/stopwatch.hpp"

namespace cumemctl::steps {

// Adds cause and remedy to a failed step's problem (the diagnosis layer, with what the operation knows).
using Diagnoser = std::function<void(Problem&)>;

// The steps of one operation, in order, with the first problem of a failed `attempt` and the
// failures of undo steps.
class StepLog {
public:
    // A log without a driver: `time`, `attempt` and `note` only. `process` is stamped on every step.
    explicit StepLog(Diagnoser diagnose = {}, std::string process = {})
        : diagnose_(std::move(diagnose)), process_(std::move(process)) {}
    // A log for `call` and `undo`, which name a driver failure through `api`.
    StepLog(const DriverApi& api, Diagnoser diagnose, std::string process = {})
        : api_(&api), diagnose_(std::move(diagnose)), process_(std::move(process)) {}

    // Runs `fn` as the step `name` (doing `call`): records it with its time; when fn throws Error the
    // step is recorded as failed (with the driver's answer), the problem diagnosed and the error
    // rethrown. Returns what fn returns.
    template <class Fn>
    auto time(std::string name, std::string call, Fn&& fn) -> decltype(fn()) {
        check_interrupted();
        Stopwatch watch;
        try {
            if constexpr (std::is_void_v<decltype(fn())>) {
                fn();
                passed(std::move(name), std::move(call), watch.seconds(), {});
            } else {
                auto value = fn();
                passed(std::move(name), std::move(call), watch.seconds(), {});
                return value;
            }
        } catch (Error& e) {
            failed(std::move(name), std::move(call), watch.seconds(), e.problem(), false);
            throw;
        }
    }

    // Runs `fn` (which returns the step's detail) as the step `name`. A step that throws Error is
    // recorded as failed with the message as its detail, its problem diagnosed and kept when it is the
    // first, and false returned.
    bool attempt(std::string name, const std::function<std::string()>& fn, std::string call = {});

    // Runs one driver call as a step: times and records it; throws Error (diagnosed) when the entry
    // point is missing (require_entry's message, with the table's version) or the call fails. Needs the
    // driver constructor.
    template <typename Fn, typename... Args>
    Step& call(std::string name, EntryPoint entry, Fn fn, Args... args) {
        check_interrupted();
        require_entry(reinterpret_cast<const void*>(fn), entry);
        Stopwatch sw;
        const CUresult r = fn(args...);
        Step& s = record_call(std::move(name), entry.name, r, sw.seconds(), false);
        if (r != CUDA_SUCCESS) fail_call(s, r);
        return s;
    }

    // Runs one undo call as a step; never throws. A missing entry point or a failure is recorded and
    // kept in undo_failures().
    template <typename Fn, typename... Args>
    void undo(std::string name, EntryPoint entry, Fn fn, Args... args) noexcept {
        try {
            if (fn == nullptr) {
                record_call(std::move(name), entry.name, CUDA_ERROR_NOT_FOUND, 0, true).detail =
                    "the driver lacks this entry point";
                keep_undo_failure(steps_.back(), CUDA_ERROR_NOT_FOUND);
                return;
            }
            Stopwatch sw;
            const CUresult r = fn(args...);
            Step& s = record_call(std::move(name), entry.name, r, sw.seconds(), true);
            if (r != CUDA_SUCCESS) keep_undo_failure(s, r);
        } catch (...) {
            // Recording can only fail for lack of memory; an undo must not throw from a destructor.
        }
    }

    // Records a step that is no driver call (a check, a wait): its name, time and detail; it passed.
    Step& note(std::string name, double seconds, std::string detail);

    // Appends steps made elsewhere (a second process's, which carry their own process name).
    void append(const std::vector<Step>& more);
    // Keeps `problem` as the log's problem unless it already has one.
    void keep_problem(Problem problem);
    // Adds the diagnosis to a problem from a failed call made outside call() (a polling loop).
    void diagnose(Problem& problem) const {
        if (diagnose_) diagnose_(problem);
    }

    const std::vector<Step>& steps() const { return steps_; }
    // The first failure of an `attempt`, or one kept with keep_problem.
    const std::optional<Problem>& problem() const { return problem_; }
    bool passed() const { return !problem_; }
    // The failures of undo steps, as problems (exit code "failed"), in the order they happened.
    const std::vector<Problem>& undo_failures() const { return undo_failures_; }
    // The driver of a log made with one (throws std::logic_error otherwise).
    const DriverApi& api() const;
    const std::string& process() const { return process_; }

private:
    Step& passed(std::string name, std::string call, double seconds, std::string detail);
    Step& failed(std::string name, std::string call, double seconds, Problem& problem, bool detail_is_message);
    Step& record_call(std::string name, const char* entry, CUresult r, double seconds, bool undo);
    [[noreturn]] void fail_call(const Step& step, CUresult r);
    void keep_undo_failure(const Step& step, CUresult r);

    const DriverApi* api_ = nullptr;
    Diagnoser diagnose_;
    std::string process_;
    std::vector<Step> steps_;
    std::optional<Problem> problem_;
    std::vector<Problem> undo_failures_;
};

}  // namespace cumemctl::steps

namespace cumemctl {
using steps::Diagnoser;
using steps::StepLog;
}  // namespace cumemctl
