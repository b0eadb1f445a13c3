#include "util/duration.hpp"

#include <fmt/format.h>

namespace cumemctl {

std::string format_duration(double seconds) {
    if (!(seconds > 0)) return "0 s";
    if (seconds < 1e-3) return fmt::format("{:.3g} us", seconds * 1e6);
    if (seconds < 1) return fmt::format("{:.3g} ms", seconds * 1e3);
    if (seconds < 1000) return fmt::format("{:.3g} s", seconds);
    return fmt::format("{:.0f} s", seconds);
}

}  // namespace cumemctl
