// Where the commands read the system (/proc, /sys, /dev, /etc): the real one, or a test's fake system
// root (CUMEMCTL_SYSROOT). The test runner sets CUMEMCTL_HERMETIC in every case; then reading the real
// system is an error, so that no test depends on this machine's kernel log, /proc/devices or /dev.
#pragma once

#include <string>
#include <string_view>

namespace cumemctl {

// The variables: the fake root's path, and the test runner's promise that a fake root is wanted.
inline constexpr const char* kSysrootVariable = "CUMEMCTL_SYSROOT";
inline constexpr const char* kHermeticVariable = "CUMEMCTL_HERMETIC";

// CUMEMCTL_SYSROOT, or "" for the real system. Throws Error (failed) where CUMEMCTL_HERMETIC is set
// and CUMEMCTL_SYSROOT is not: the caller would read the real system, `reading` ("the kernel's log").
// As root, the fake root and the folders above it must be root's alone (trusted_file's rule): else
// Error (permission, exit 4) naming the first that others can change. (A pod's /host holds the host's
// own /proc, whose entries are every user's: the files that decide are read through read_trusted_text.)
std::string system_root(std::string_view reading);

// Throws the same Error where CUMEMCTL_HERMETIC is set: before a read of the real `path` itself.
void require_real_system(std::string_view path);

}  // namespace cumemctl
