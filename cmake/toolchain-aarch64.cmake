# aarch64 (Grace: GH200, GB200, GB300) release builds from an x86-64 machine: clang for
# aarch64-linux-gnu against a Debian 11 arm64 root (cmake/debian11-sysroot.cmake says how).
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CUMEMCTL_TARGET aarch64-linux-gnu)
include(${CMAKE_CURRENT_LIST_DIR}/debian11-sysroot.cmake)
