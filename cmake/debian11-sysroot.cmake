# What both release toolchains share (toolchain-x86_64.cmake, toolchain-aarch64.cmake): Debian 12's
# clang and lld, compiling and linking against a Debian 11 root (glibc 2.31, libstdc++ 10) that
# scripts/debian11-root.sh makes, with libstdc++ and libgcc linked into the executables. The binary then
# needs glibc 2.31 or newer and no particular libstdc++ (README, "Platforms"). The including file sets
# CUMEMCTL_TARGET (the GNU triple) and CMAKE_SYSTEM_PROCESSOR.
#   cmake -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64.cmake -DCUMEMCTL_SYSROOT=/path/to/root ...
# (or CUMEMCTL_SYSROOT in the environment). scripts/release.sh does all of it.
set(CMAKE_SYSTEM_NAME Linux)
if(NOT CUMEMCTL_SYSROOT)
  set(CUMEMCTL_SYSROOT "$ENV{CUMEMCTL_SYSROOT}")
endif()
if(NOT CUMEMCTL_SYSROOT OR NOT EXISTS "${CUMEMCTL_SYSROOT}/usr/include/stdio.h")
  message(FATAL_ERROR "CUMEMCTL_SYSROOT (${CUMEMCTL_SYSROOT}) is not a Debian 11 root with libc6-dev: "
                      "make one with scripts/debian11-root.sh ARCH DIR and pass -DCUMEMCTL_SYSROOT=DIR")
endif()
# try_compile's projects read this file again: they get the root too.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES CUMEMCTL_SYSROOT CUMEMCTL_TARGET)

set(CMAKE_SYSROOT "${CUMEMCTL_SYSROOT}")
foreach(lang C CXX ASM)
  set(CMAKE_${lang}_COMPILER_TARGET ${CUMEMCTL_TARGET})
endforeach()
set(CMAKE_C_COMPILER clang)
set(CMAKE_CXX_COMPILER clang++)
set(CMAKE_ASM_COMPILER clang)
# libstdc++ 10 of the root, not this machine's gcc.
set(CMAKE_CXX_FLAGS_INIT "--gcc-toolchain=${CUMEMCTL_SYSROOT}/usr")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-fuse-ld=lld --gcc-toolchain=${CUMEMCTL_SYSROOT}/usr -static-libstdc++ -static-libgcc")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-fuse-ld=lld --gcc-toolchain=${CUMEMCTL_SYSROOT}/usr")
set(CMAKE_MODULE_LINKER_FLAGS_INIT "${CMAKE_SHARED_LINKER_FLAGS_INIT}")
find_program(CMAKE_STRIP NAMES llvm-strip-14 llvm-strip)

# Programs (nvcc, the tools) are this machine's; libraries, headers and packages the root's (the
# header-only ones are in its /usr/local), and the CUDA toolkit's, whose headers and nvcc serve every
# architecture.
set(CMAKE_FIND_ROOT_PATH "${CUMEMCTL_SYSROOT}" "${CUDAToolkit_ROOT}" /usr/local/cuda)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# fmt's CMake package names its compiled library for this machine's architecture only: the build compiles
# fmt's implementation itself (CMakeLists.txt) from the headers that cmake/fmt-header-only/ declares for
# every architecture.
set(fmt_DIR "${CMAKE_CURRENT_LIST_DIR}/fmt-header-only" CACHE PATH "fmt's header-only package")
