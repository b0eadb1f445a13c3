# fmt as the release builds use it (cmake/debian11-sysroot.cmake): header-only, from the root's
# /usr/local/include, where scripts/debian11-root.sh copies Debian 12's headers. Both targets are the
# header-only library: nothing here links a compiled libfmt (CMakeLists.txt compiles fmt's implementation
# once, from these headers, into the build's own static library).
find_path(CUMEMCTL_FMT_INCLUDE_DIR fmt/format.h REQUIRED)
file(STRINGS "${CUMEMCTL_FMT_INCLUDE_DIR}/fmt/core.h" _fmt_version_line REGEX "^#define FMT_VERSION ")
string(REGEX REPLACE ".* ([0-9]+)$" "\\1" _fmt_version "${_fmt_version_line}")
math(EXPR _fmt_major "${_fmt_version} / 10000")
math(EXPR _fmt_minor "${_fmt_version} / 100 % 100")
math(EXPR _fmt_patch "${_fmt_version} % 100")
set(fmt_VERSION "${_fmt_major}.${_fmt_minor}.${_fmt_patch}")
foreach(_fmt_target fmt::fmt-header-only fmt::fmt)
  if(NOT TARGET ${_fmt_target})
    add_library(${_fmt_target} INTERFACE IMPORTED)
    set_target_properties(${_fmt_target} PROPERTIES
      INTERFACE_COMPILE_DEFINITIONS "FMT_HEADER_ONLY=1"
      INTERFACE_INCLUDE_DIRECTORIES "${CUMEMCTL_FMT_INCLUDE_DIR}")
  endif()
endforeach()
