#include "gpu/step_log.hpp"

#include <utility>

#include <fmt/format.h>

namespace cumemctl {

Step& StepLog::record(std::string name, const char* entry, CUresult r, double seconds, bool undo) {
    Step s;
    s.name = std::move(name);
    s.call = entry;
    s.result = static_cast<int>(r);
    s.result_name = r == CUDA_SUCCESS ? "CUDA_SUCCESS" : describe_failure(api_, r, entry).name;
    s.seconds = seconds;
    s.undo = undo;
    s.ok = r == CUDA_SUCCESS;
    steps_.push_back(std::move(s));
    return steps_.back();
}

Step& StepLog::note(std::string name, double seconds, std::string detail) {
    Step s;
    s.name = std::move(name);
    s.result_name = "ok";
    s.seconds = seconds;
    s.detail = std::move(detail);
    steps_.push_back(std::move(s));
    return steps_.back();
}

void StepLog::fail(const Step& step, CUresult r) {
    Problem p;
    p.driver = describe_failure(api_, r, step.call);
    p.exit_code = exit_code_for(r);
    p.message = fmt::format("{}: {} failed: {} ({})", step.name, step.call, p.driver->name, p.driver->text);
    if (explain_) explain_(p, r, step.call);
    throw Error(std::move(p));
}

void StepLog::keep_undo_failure(const Step& step, CUresult r) {
    Problem p;
    p.driver = describe_failure(api_, r, step.call);
    p.exit_code = ExitCode::failed;
    p.message = fmt::format("cleanup: {}: {} failed: {} ({})", step.name, step.call, p.driver->name, p.driver->text);
    p.remedy = "the driver may still hold this resource until the process exits; report this with the command line";
    undo_failures_.push_back(std::move(p));
}

}  // namespace cumemctl
