// What both fuzz targets require of a parser's error: the Error of a /proc file, exit 3, a message
// that starts with the source name, is printable ASCII (quoted lines are escaped) and stays short.
#pragma once

#include <cstdlib>
#include <string_view>

#include "base/error.hpp"

namespace fuzz {

// The source name the targets pass to the parsers.
inline constexpr std::string_view kSource = "fuzz-input";

// Stops the run (a finding) when `ok` is false.
inline void require(bool ok) {
    if (!ok) std::abort();
}

// Checks an Error thrown by a parser.
inline void check_error(const cumemctl::Error& e) {
    const cumemctl::Problem& p = e.problem();
    require(e.exit_code() == cumemctl::ExitCode::unavailable);
    require(std::string_view(p.message).substr(0, kSource.size()) == kSource);
    require(p.message.size() < 400);
    require(!p.remedy.empty());
    for (char c : p.message) require(c >= 0x20 && c < 0x7f);
}

}  // namespace fuzz
