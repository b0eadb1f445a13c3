#include "steps/step_log.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace cumemctl::steps {

bool StepLog::attempt(std::string name, const std::function<std::string()>& fn, std::string call) {
    check_interrupted();
    Stopwatch watch;
    try {
        std::string detail = fn();
        passed(std::move(name), std::move(call), watch.seconds(), std::move(detail));
        return true;
    } catch (Error& e) {
        failed(std::move(name), std::move(call), watch.seconds(), e.problem(), true);
        keep_problem(e.problem());
        return false;
    }
}

Step& StepLog::note(std::string name, double seconds, std::string detail) {
    return passed(std::move(name), {}, seconds, std::move(detail));
}

void StepLog::append(const std::vector<Step>& more) {
    steps_.insert(steps_.end(), more.begin(), more.end());
}

void StepLog::keep_problem(Problem problem) {
    if (!problem_) problem_ = std::move(problem);
}

const DriverApi& StepLog::api() const {
    if (api_ == nullptr) throw std::logic_error("this step log has no driver");
    return *api_;
}

Step& StepLog::passed(std::string name, std::string call, double seconds, std::string detail) {
    Step s;
    s.name = std::move(name);
    s.call = std::move(call);
    s.seconds = seconds;
    s.detail = std::move(detail);
    s.process = process_;
    steps_.push_back(std::move(s));
    return steps_.back();
}

Step& StepLog::failed(std::string name, std::string call, double seconds, Problem& problem, bool detail_is_message) {
    if (diagnose_) diagnose_(problem);
    Step s;
    s.name = std::move(name);
    s.call = std::move(call);
    s.ok = false;
    s.seconds = seconds;
    s.process = process_;
    if (problem.driver) {
        s.result = problem.driver->code;
        s.result_name = problem.driver->name;
    }
    if (detail_is_message) s.detail = problem.message;
    steps_.push_back(std::move(s));
    return steps_.back();
}

Step& StepLog::record_call(std::string name, const char* entry, CUresult r, double seconds, bool undo) {
    Step s;
    s.name = std::move(name);
    s.call = entry;
    s.result = static_cast<int>(r);
    s.result_name = r == CUDA_SUCCESS ? "CUDA_SUCCESS" : describe_failure(api(), r, entry).name;
    s.seconds = seconds;
    s.undo = undo;
    s.ok = r == CUDA_SUCCESS;
    s.process = process_;
    steps_.push_back(std::move(s));
    return steps_.back();
}

void StepLog::fail_call(const Step& step, CUresult r) {
    Problem p;
    p.driver = describe_failure(api(), r, step.call);
    p.exit_code = exit_code_for(r);
    p.message = fmt::format("{}: {} failed: {} ({})", step.name, step.call, p.driver->name, p.driver->text);
    if (diagnose_) diagnose_(p);
    throw Error(std::move(p));
}

void StepLog::keep_undo_failure(const Step& step, CUresult r) {
    Problem p;
    p.driver = describe_failure(api(), r, step.call);
    p.exit_code = ExitCode::failed;
    p.message = fmt::format("cleanup: {}: {} failed: {} ({})", step.name, step.call, p.driver->name, p.driver->text);
    p.remedy = "the driver may still hold this resource until the process exits; report this with the command line";
    undo_failures_.push_back(std::move(p));
}

}  // namespace cumemctl::steps
