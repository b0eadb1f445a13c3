#include "util/version.hpp"

namespace cumemctl {

std::string_view tool_version() {
    return CUMEMCTL_VERSION;
}

std::string_view git_commit() {
    return CUMEMCTL_GIT_COMMIT;
}

}  // namespace cumemctl
