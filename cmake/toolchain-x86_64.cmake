# x86-64 release builds that run on glibc 2.31: clang against a Debian 11 amd64 root
# (cmake/debian11-sysroot.cmake says how).
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(CUMEMCTL_TARGET x86_64-linux-gnu)
include(${CMAKE_CURRENT_LIST_DIR}/debian11-sysroot.cmake)
