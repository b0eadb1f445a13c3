// Which cumemctl this is: the version of the project and the git commit it was built from.
#pragma once

#include <string_view>

namespace cumemctl {

// The project version, "0.1.0".
std::string_view tool_version();

// The abbreviated commit the binary was built from, or "unknown" outside a git checkout. Only
// util/version.cpp sees the commit, so a new commit recompiles one file.
std::string_view git_commit();

}  // namespace cumemctl
