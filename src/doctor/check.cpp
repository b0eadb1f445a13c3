#include "doctor/check.hpp"
#include "report/json_fields.hpp"

#include <algorithm>
#include <utility>

namespace cumemctl::doctor {

namespace {

// The one order of the statuses, mildest first: a status's severity is its place here.
constexpr std::array<CheckStatus, kStatusCount> kMildestFirst{CheckStatus::skip,    CheckStatus::pass,
                                                              CheckStatus::warn,    CheckStatus::busy,
                                                              CheckStatus::timeout, CheckStatus::fail};

}  // namespace

int status_severity(CheckStatus status) {
    for (std::size_t i = 0; i < kMildestFirst.size(); ++i) {
        if (kMildestFirst[i] == status) return static_cast<int>(i);
    }
    return static_cast<int>(kMildestFirst.size()) - 1;
}

const std::array<CheckStatus, kStatusCount>& statuses_worst_first() {
    static const std::array<CheckStatus, kStatusCount> worst_first = [] {
        std::array<CheckStatus, kStatusCount> out{};
        std::copy(kMildestFirst.rbegin(), kMildestFirst.rend(), out.begin());
        return out;
    }();
    return worst_first;
}

bool status_fails(CheckStatus status) {
    return status_severity(status) >= status_severity(CheckStatus::timeout);
}

std::optional<CheckStatus> parse_status(std::string_view name) {
    for (const CheckStatus s : kMildestFirst) {
        if (status_name(s) == name) return s;
    }
    return std::nullopt;
}

std::string_view status_name(CheckStatus status) {
    switch (status) {
        case CheckStatus::pass:
            return "pass";
        case CheckStatus::warn:
            return "warn";
        case CheckStatus::fail:
            return "fail";
        case CheckStatus::skip:
            return "skip";
        case CheckStatus::busy:
            return "busy";
        case CheckStatus::timeout:
            return "timeout";
    }
    return "fail";
}

CheckOutcome CheckOutcome::pass(std::string reason, nlohmann::json details) {
    return CheckOutcome{CheckStatus::pass, std::move(reason), {}, std::move(details), std::nullopt, {}};
}

CheckOutcome CheckOutcome::warn(std::string reason, std::string remedy, nlohmann::json details) {
    return CheckOutcome{CheckStatus::warn, std::move(reason), std::move(remedy), std::move(details), std::nullopt, {}};
}

CheckOutcome CheckOutcome::fail(std::string reason, std::string remedy, nlohmann::json details) {
    return CheckOutcome{CheckStatus::fail, std::move(reason), std::move(remedy), std::move(details), std::nullopt, {}};
}

CheckOutcome CheckOutcome::skip(std::string reason, nlohmann::json details) {
    return CheckOutcome{CheckStatus::skip, std::move(reason), {}, std::move(details), std::nullopt, {}};
}

CheckOutcome CheckOutcome::busy(std::string reason, std::string remedy, nlohmann::json details) {
    return CheckOutcome{CheckStatus::busy, std::move(reason), std::move(remedy), std::move(details), std::nullopt, {}};
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
    if (result.outcome.driver) {
        const auto& d = *result.outcome.driver;
        j["driver_call"] = {{"call", d.call}, {"result", d.code}, {"name", d.name}, {"text", d.text}};
    }
    return j;
}

}  // namespace cumemctl::doctor
