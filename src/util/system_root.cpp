#include "util/system_root.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "base/error.hpp"

namespace cumemctl {

void require_real_system(std::string_view path) {
    const char* hermetic = std::getenv(kHermeticVariable);
    if (hermetic == nullptr || *hermetic == '\0') return;
    throw Error(ExitCode::failed,
                fmt::format("a hermetic test would read this machine's {} ({} is set)", path, kHermeticVariable),
                fmt::format("give the case a fake system root ({}=DIR, made by tests/cli/sysroot.sh) and its files",
                            kSysrootVariable));
}

std::string system_root(std::string_view reading) {
    if (const char* root = std::getenv(kSysrootVariable); root != nullptr) return root;
    require_real_system(reading);
    return "";
}

}  // namespace cumemctl
