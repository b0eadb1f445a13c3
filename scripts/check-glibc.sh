#!/usr/bin/env bash
# Checks what a release binary needs of a node's C library (docs/platforms.md): no symbol version
# above the glibc floor, no libstdc++ or libgcc symbol versions (GLIBCXX_, CXXABI_, GCC_: they are
# linked in), and nothing but glibc's own libraries as NEEDED. Fails, naming the symbols, otherwise.
#   check-glibc.sh BINARY...
set -euo pipefail
# The floor README.md and docs/platforms.md state; a change that raises it must change all three.
floor=2.31
for doc in README.md docs/platforms.md; do
  grep -q "glibc $floor or newer" "$(dirname "$0")/../$doc" ||
    { echo "check-glibc: $doc does not say \"glibc $floor or newer\"" >&2; exit 1; }
done
objdump=$(command -v llvm-objdump-14 || command -v llvm-objdump || echo objdump)
readelf=$(command -v llvm-readelf-14 || command -v llvm-readelf || echo readelf)
status=0
for bin in "$@"; do
  symbols=$("$objdump" -T "$bin")
  highest=$(grep -o 'GLIBC_[0-9][0-9.]*' <<<"$symbols" | sed 's/GLIBC_//' | sort -uV | tail -1)
  if [[ $(printf '%s\n%s\n' "$floor" "$highest" | sort -V | tail -1) != "$floor" ]]; then
    echo "check-glibc: $bin needs glibc $highest, above the floor $floor:" >&2
    grep -E "GLIBC_[0-9.]+" <<<"$symbols" | while read -r line; do
      v=$(grep -o 'GLIBC_[0-9][0-9.]*' <<<"$line" | sed 's/GLIBC_//')
      [[ $(printf '%s\n%s\n' "$floor" "$v" | sort -V | tail -1) == "$floor" ]] || echo "  $line" >&2
    done
    status=1
  fi
  if grep -Eq '(GLIBCXX|CXXABI|GCC)_[0-9]' <<<"$symbols"; then
    echo "check-glibc: $bin needs libstdc++ or libgcc symbol versions:" >&2
    grep -E '(GLIBCXX|CXXABI|GCC)_[0-9]' <<<"$symbols" | sed 's/^/  /' >&2
    status=1
  fi
  needed=$("$readelf" -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
  for lib in $needed; do
    case $lib in
      libc.so.6 | libm.so.6 | libdl.so.2 | libpthread.so.0 | ld-linux-x86-64.so.2 | ld-linux-aarch64.so.1) ;;
      *) echo "check-glibc: $bin needs $lib, which is not part of glibc" >&2; status=1 ;;
    esac
  done
  ((status)) || echo "check-glibc: $bin: highest GLIBC_$highest (floor $floor), no libstdc++/libgcc versions, needs $needed"
done
exit "$status"
