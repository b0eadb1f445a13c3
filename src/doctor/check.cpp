#include "doctor/check.hpp"
#include "report/json_fields.hpp"
#include "report/driver_call_json.hpp"

#include <algorithm>
#include <utility>

namespace cumemctl::doctor {

CheckOutcome CheckOutcome::pass(std::string reason, nlohmann::json details) {
    return CheckOutcome{CheckStatus::pass, std::move(reason), {}, std::move(details), std::nullopt, {}, {}};
}

CheckOutcome CheckOutcome::warn(std::string reason, std::string remedy, nlohmann::json details) {
    return CheckOutcome{
        CheckStatus::warn, std::move(reason), std::move(remedy), std::move(details), std::nullopt, {}, {}};
}

CheckOutcome CheckOutcome::fail(std::string reason, std::string remedy, nlohmann::json details) {
    return CheckOutcome{
        CheckStatus::fail, std::move(reason), std::move(remedy), std::move(details), std::nullopt, {}, {}};
}

CheckOutcome CheckOutcome::skip(std::string reason, nlohmann::json details) {
    return CheckOutcome{CheckStatus::skip, std::move(reason), {}, std::move(details), std::nullopt, {}, {}};
}

CheckOutcome CheckOutcome::busy(std::string reason, std::string remedy, nlohmann::json details) {
    return CheckOutcome{
        CheckStatus::busy, std::move(reason), std::move(remedy), std::move(details), std::nullopt, {}, {}};
}

CheckOutcome CheckOutcome::with_details(nlohmann::json d) const {
    CheckOutcome o = *this;
    o.details = std::move(d);
    return o;
}

nlohmann::json to_json(const CheckResult& result) {
    nlohmann::json j{{"check", result.check},
                     {"device", result.device ? nlohmann::json(*result.device) : nlohmann::json(nullptr)},
                     {"status", status_name(result.outcome.status)},
                     {"reason", text_or_null(result.outcome.reason)},
                     {"remedy", text_or_null(result.outcome.remedy)},
                     {"seconds", result.seconds},
                     {"details", result.outcome.details}};
    if (!result.outcome.brief.empty()) j["brief"] = result.outcome.brief;
    if (result.outcome.driver) j["driver_call"] = cumemctl::to_json(*result.outcome.driver);
    return j;
}

}  // namespace cumemctl::doctor
