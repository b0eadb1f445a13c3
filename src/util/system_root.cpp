#include "util/system_root.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>

#include <fmt/format.h>

#include "base/error.hpp"
#include "util/file_mode.hpp"
#include "util/trusted_file.hpp"

namespace cumemctl {

void require_real_system(std::string_view path) {
    const char* hermetic = std::getenv(kHermeticVariable);
    if (hermetic == nullptr || *hermetic == '\0') return;
    throw Error(ExitCode::failed,
                fmt::format("a hermetic test would read this machine's {} ({} is set)", path, kHermeticVariable),
                fmt::format("give the case a fake system root ({}=DIR, made by tests/cli/sysroot.sh) and its files",
                            kSysrootVariable));
}

namespace {

void require_root_only(const std::string& root) {
    const std::optional<UnsafePath> unsafe = open_checked(root, Check::everything, Links::follow, true).unsafe;
    if (!unsafe) return;
    throw Error(
        Problem{.exit_code = ExitCode::permission,
                .message = fmt::format("refusing {} {}: {} {}", kSysrootVariable, root, unsafe->path, unsafe->why),
                .cause = "as root, cumemctl believes nothing that a user other than root could change",
                .remedy = fmt::format("chown -R root:root {0} && chmod -R go-w {0}, or leave {1} out (it is for tests)",
                                      root, kSysrootVariable)});
}

}  // namespace

std::string system_root(std::string_view reading) {
    if (const char* root = std::getenv(kSysrootVariable); root != nullptr) {
        if (judged_as_root() && *root != '\0') require_root_only(root);
        return root;
    }
    require_real_system(reading);
    return "";
}

}  // namespace cumemctl
