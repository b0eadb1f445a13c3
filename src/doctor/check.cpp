#include "doctor/check.hpp"
#include "report/json_fields.hpp"
#include "report/driver_call_json.hpp"

#include <algorithm>
#include <utility>

namespace cumemctl::doctor {

namespace {
CheckOutcome with(CheckStatus status, std::string reason, std::string remedy, Evidence evidence) {
    return CheckOutcome{status, std::move(reason), std::move(remedy), std::move(evidence), std::nullopt, {}, {}};
}
}  // namespace

CheckOutcome CheckOutcome::pass(std::string reason, Evidence evidence) {
    return with(CheckStatus::pass, std::move(reason), {}, std::move(evidence));
}

CheckOutcome CheckOutcome::warn(std::string reason, std::string remedy, Evidence evidence) {
    return with(CheckStatus::warn, std::move(reason), std::move(remedy), std::move(evidence));
}

CheckOutcome CheckOutcome::fail(std::string reason, std::string remedy, Evidence evidence) {
    return with(CheckStatus::fail, std::move(reason), std::move(remedy), std::move(evidence));
}

CheckOutcome CheckOutcome::skip(std::string reason, Evidence evidence) {
    return with(CheckStatus::skip, std::move(reason), {}, std::move(evidence));
}

CheckOutcome CheckOutcome::busy(std::string reason, std::string remedy, Evidence evidence) {
    return with(CheckStatus::busy, std::move(reason), std::move(remedy), std::move(evidence));
}

CheckOutcome CheckOutcome::with_evidence(Evidence e) const {
    CheckOutcome o = *this;
    o.evidence = std::move(e);
    return o;
}

nlohmann::json to_json(const CheckResult& result) {
    nlohmann::json j{{"check", result.check},
                     {"device", result.device ? nlohmann::json(*result.device) : nlohmann::json(nullptr)},
                     {"status", status_name(result.outcome.status)},
                     {"reason", text_or_null(result.outcome.reason)},
                     {"remedy", text_or_null(result.outcome.remedy)},
                     {"seconds", result.seconds},
                     {"details", to_json(result.outcome.evidence)}};
    if (result.outcome.held_by) add_held_by(j["details"], *result.outcome.held_by);
    if (!result.outcome.brief.empty()) j["brief"] = result.outcome.brief;
    if (result.outcome.driver) j["driver_call"] = cumemctl::to_json(*result.outcome.driver);
    return j;
}

}  // namespace cumemctl::doctor
