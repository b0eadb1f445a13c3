#include "util/host.hpp"

#include <cstdio>

#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <ctime>

#include <fmt/format.h>

namespace cumemctl {

std::string host_name() {
    if (const char* env = std::getenv("CUMEMCTL_HOST"); env != nullptr && *env != '\0') return env;
    char name[HOST_NAME_MAX + 1] = {};
    if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "unknown";
    return name;
}

std::string utc_timestamp(std::chrono::system_clock::time_point when) {
    const std::time_t t = std::chrono::system_clock::to_time_t(when);
    std::tm tm{};
    gmtime_r(&t, &tm);
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                       tm.tm_min, tm.tm_sec);
}

std::optional<std::chrono::system_clock::time_point> parse_utc_timestamp(const std::string& text) {
    std::tm tm{};
    char z = 0;
    int used = 0;
    if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                    &tm.tm_min, &tm.tm_sec, &z, &used) != 7 ||
        z != 'Z' || static_cast<std::size_t>(used) != text.size()) {
        return std::nullopt;
    }
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    const std::time_t t = timegm(&tm);
    if (t == static_cast<std::time_t>(-1)) return std::nullopt;
    // A clock's time point holds some 292 years either side of 1970: a time past them is its end, not a
    // wrapped count (9999-12-31 is in the future, not in 1816).
    using std::chrono::system_clock;
    const auto limit = std::chrono::duration_cast<std::chrono::seconds>(system_clock::duration::max()).count();
    if (t >= limit) return system_clock::time_point::max();
    if (t <= -limit) return system_clock::time_point::min();
    return system_clock::from_time_t(t);
}

double unix_seconds(std::chrono::system_clock::time_point when) {
    return std::chrono::duration<double>(when.time_since_epoch()).count();
}

}  // namespace cumemctl
