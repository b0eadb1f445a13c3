#include "util/duration.hpp"

#include <cmath>

#include <fmt/format.h>

namespace cumemctl {

std::string format_duration(double seconds) {
    if (!(seconds > 0)) return "0 s";
    // Each unit up to where three digits round to 1000 of it: 0.9996 s is "1 s", not "1e+03 ms".
    if (seconds < 999.5e-6) return fmt::format("{:.3g} us", seconds * 1e6);
    if (seconds < 0.9995) return fmt::format("{:.3g} ms", seconds * 1e3);
    if (seconds < 999.5) return fmt::format("{:.3g} s", seconds);
    return fmt::format("{:.0f} s", seconds);
}

std::string format_age(double seconds) {
    if (!(seconds > 0)) return "0 s";
    struct Unit {
        double seconds;
        const char* name;
    };
    static constexpr Unit kUnits[] = {{86400, "days"}, {3600, "h"}, {60, "min"}, {1, "s"}};
    for (const Unit& u : kUnits) {
        const double value = seconds / u.seconds;
        if (value < 2 && u.seconds > 1) continue;
        const double shown = value < 10 ? std::floor(value * 10) / 10 : std::floor(value);
        return fmt::format("{:g} {}", shown, u.name);
    }
    return "0 s";
}

}  // namespace cumemctl
