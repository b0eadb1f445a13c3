#!/usr/bin/env bash
# Installs the build in $1 into a temporary DESTDIR with prefix /usr and checks what lands there:
# the binary (which runs and names its version and commit, and is stripped unless the build was
# configured with CUMEMCTL_INSTALL_SYMBOLS=ON), every manual page, the bash and zsh completion scripts
# (the same text that `cumemctl completion` writes), and the Slurm IMEX channel prolog and epilog with
# their settings, whose default cumemctl is the installed binary.
set -euo pipefail
build=$1
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
DESTDIR=$dest cmake --install "$build" --prefix /usr >/dev/null
fail() { echo "FAIL: $*"; exit 1; }
bin=$dest/usr/bin/cumemctl
[[ -x $bin ]] || fail "no executable $bin"
"$bin" --version | grep -Eq '^cumemctl [0-9]+\.[0-9]+\.[0-9]+ \(git [0-9a-f]{7,}|unknown\)$' || fail "--version: $("$bin" --version)"
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
if grep -q '^CUMEMCTL_INSTALL_SYMBOLS:BOOL=ON$' "$build/CMakeCache.txt"; then
  readelf -S "$bin" | grep -q '\.symtab' || fail "CUMEMCTL_INSTALL_SYMBOLS=ON, but the installed binary has no symbol table"
else
  ! readelf -S "$bin" | grep -Eq '\.(symtab|debug_info)' || fail "the installed binary is not stripped"
fi
slurm=$dest/usr/share/cumemctl/slurm
for f in imex-channel imex-prolog imex-epilog; do [[ -x $slurm/$f ]] || fail "no executable $slurm/$f"; done
[[ -f $slurm/imex-channels.conf ]] || fail "no $slurm/imex-channels.conf"
[[ -f $dest/usr/share/cumemctl/prometheus/cumemctl-alerts.yaml ]] || fail "no Prometheus alerting rules"
default=$(sed -n 's/^CUMEMCTL=\$here\/\(.*\)$/\1/p' "$slurm/imex-channel")
[[ $(realpath "$slurm/$default") == "$(realpath "$bin")" ]] || fail "the prolog's default cumemctl ($slurm/$default) is not $bin"
for page in "$src"/man/*.1; do
  [[ -f $dest/usr/share/man/man1/$(basename "$page") ]] || fail "no manual page $(basename "$page")"
done
bash_file=$dest/usr/share/bash-completion/completions/cumemctl
zsh_file=$dest/usr/share/zsh/site-functions/_cumemctl
[[ -f $bash_file ]] || fail "no $bash_file"
[[ -f $zsh_file ]] || fail "no $zsh_file"
diff <("$bin" completion bash) "$bash_file" >/dev/null || fail "the installed bash completion is not what the binary writes"
diff <("$bin" completion zsh) "$zsh_file" >/dev/null || fail "the installed zsh completion is not what the binary writes"
head -1 "$zsh_file" | grep -qx '#compdef cumemctl' || fail "the zsh completion lacks #compdef"
bash -n "$bash_file" || fail "the bash completion does not parse"
echo "ok: $(cd "$dest" && find . -type f | sort | tr '\n' ' ')"
