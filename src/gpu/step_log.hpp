// A record of the driver calls an operation made, in order, each with its result and time, so that a
// report can show every step, including the ones that undo what was done when something failed.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cuda/driver_call.hpp"
#include "util/stopwatch.hpp"

namespace cumemctl {

// One step as a report shows it: what was done, which call, the driver's answer and how long it took.
struct Step {
    std::string name;               // "create endpoint", "unbind device 1"
    std::string call;               // the entry point, empty for a step that is no driver call
    int result = 0;                 // the CUresult
    std::string result_name;        // "CUDA_SUCCESS", "CUDA_ERROR_INVALID_VALUE"
    double seconds = 0;
    std::string detail;             // what came back or what was asked: "id 1", "2 MiB on device 0"
    bool undo = false;              // a step that undoes an earlier one
    bool ok = true;                 // false for a failed call or a wait that ran out of time
};

// Adds cause and remedy to a failed call's problem; called with the problem, the CUresult and the call.
using Explainer = std::function<void(Problem&, CUresult, const std::string& call)>;

// The steps of one operation. Calls that fail throw (with the explainer's diagnosis); undo calls,
// which run from destructors, never throw and keep their failures for the report.
class StepLog {
public:
    StepLog(const DriverApi& api, Explainer explain) : api_(api), explain_(std::move(explain)) {}

    // Runs one driver call as a step: times and records it; throws Error when the entry point is
    // missing or the call fails.
    template <typename Fn, typename... Args>
    Step& call(std::string name, const char* entry, Fn fn, Args... args) {
        require_entry(reinterpret_cast<const void*>(fn), entry, 0);
        Stopwatch sw;
        const CUresult r = fn(args...);
        Step& s = record(std::move(name), entry, r, sw.seconds(), false);
        if (r != CUDA_SUCCESS) fail(s, r);
        return s;
    }

    // Runs one undo call as a step; never throws. A missing entry point or a failure is recorded and
    // kept in undo_failures().
    template <typename Fn, typename... Args>
    void undo(std::string name, const char* entry, Fn fn, Args... args) noexcept {
        try {
            if (fn == nullptr) {
                record(std::move(name), entry, CUDA_ERROR_NOT_FOUND, 0, true).detail = "the driver lacks this entry point";
                keep_undo_failure(steps_.back(), CUDA_ERROR_NOT_FOUND);
                return;
            }
            Stopwatch sw;
            const CUresult r = fn(args...);
            Step& s = record(std::move(name), entry, r, sw.seconds(), true);
            if (r != CUDA_SUCCESS) keep_undo_failure(s, r);
        } catch (...) {
            // Recording can only fail for lack of memory; an undo must not throw from a destructor.
        }
    }

    // Records a step that is no driver call (a check, a wait): its name, time and detail.
    Step& note(std::string name, double seconds, std::string detail);

    const std::vector<Step>& steps() const { return steps_; }
    // The failures of undo steps, as problems (exit code "failed"), in the order they happened.
    const std::vector<Problem>& undo_failures() const { return undo_failures_; }
    const DriverApi& api() const { return api_; }
    // Applies the explainer to a problem from a failed call made outside call() (a polling loop).
    void explain(Problem& problem, CUresult r, const std::string& call) const {
        if (explain_) explain_(problem, r, call);
    }

private:
    Step& record(std::string name, const char* entry, CUresult r, double seconds, bool undo);
    [[noreturn]] void fail(const Step& step, CUresult r);
    void keep_undo_failure(const Step& step, CUresult r);

    const DriverApi& api_;
    Explainer explain_;
    std::vector<Step> steps_;
    std::vector<Problem> undo_failures_;
};

}  // namespace cumemctl
