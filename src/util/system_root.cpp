#include "util/system_root.hpp"

#include <ftw.h>
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

// The first file or folder in the tree at `root` that others can change, walked without following links
// (a link's target is looked at with stat).
std::optional<UnsafePath> unsafe_in_tree(const std::string& root) {
    static thread_local std::optional<UnsafePath> found;
    found.reset();
    auto visit = [](const char* path, const struct stat* st, int flag, FTW*) -> int {
        struct stat target {};
        const struct stat* judged = st;
        if (flag == FTW_SL) {
            if (::stat(path, &target) != 0) return 0;  // a link to nothing there: nothing to read
            judged = &target;
        } else if (flag == FTW_NS || flag == FTW_DNR) {
            found = UnsafePath{path, "cannot be looked at"};
            return 1;
        }
        if (!S_ISDIR(judged->st_mode) && !S_ISREG(judged->st_mode)) return 0;  // a node: looked at, not read
        if (auto why = others_can_change(*judged, 0, false)) {
            found = UnsafePath{path, flag == FTW_SL ? "leads to a file that " + *why : *why};
            return 1;
        }
        return 0;
    };
    ::nftw(root.c_str(), visit, 16, FTW_PHYS);
    return found;
}

void require_root_only(const std::string& root) {
    std::optional<UnsafePath> unsafe = open_checked(root, true, Links::follow, true).unsafe;
    if (!unsafe) unsafe = unsafe_in_tree(root);
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
        if (::geteuid() == 0 && *root != '\0') require_root_only(root);
        return root;
    }
    require_real_system(reading);
    return "";
}

}  // namespace cumemctl
