// The one timeout type: how long one process waits on another (a message, an exit).
#pragma once

#include <chrono>
#include <string>

#include <fmt/format.h>

namespace cumemctl::ipc {

// A wait's limit, in milliseconds.
using Timeout = std::chrono::milliseconds;

// "20 s", "0.5 s": a timeout as messages say it.
inline std::string describe(Timeout t) {
    return fmt::format("{:g} s", static_cast<double>(t.count()) / 1000.0);
}

}  // namespace cumemctl::ipc
