#include "base/verdict.hpp"

#include <algorithm>

#include "base/enum_words.hpp"

namespace cumemctl {
namespace {

// The order of the statuses, mildest first: a status's severity is its place here.
constexpr std::array<CheckStatus, kStatusCount> kMildestFirst{CheckStatus::skip,    CheckStatus::pass,
                                                              CheckStatus::warn,    CheckStatus::busy,
                                                              CheckStatus::timeout, CheckStatus::fail};

// Each status's word; a value outside the enum reads as "fail" (a verdict nobody can read fails).
constexpr auto kStatusWords = enum_words<CheckStatus>({{CheckStatus::pass, "pass"},
                                                       {CheckStatus::warn, "warn"},
                                                       {CheckStatus::fail, "fail"},
                                                       {CheckStatus::skip, "skip"},
                                                       {CheckStatus::busy, "busy"},
                                                       {CheckStatus::timeout, "timeout"}},
                                                      "fail");

}  // namespace

int status_severity(CheckStatus status) {
    for (std::size_t i = 0; i < kMildestFirst.size(); ++i) {
        if (kMildestFirst[i] == status) return static_cast<int>(i);
    }
    return static_cast<int>(kMildestFirst.size()) - 1;
}

CheckStatus worse(CheckStatus a, CheckStatus b) {
    return status_severity(b) > status_severity(a) ? b : a;
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
    return kStatusWords.parse(name);
}

std::string_view status_name(CheckStatus status) {
    return kStatusWords.word(status);
}

}  // namespace cumemctl
