#!/usr/bin/env bash
# Installs the build in $1 into a temporary DESTDIR with prefix /usr and checks what lands there:
# the binary (which runs and names its version and commit, and is stripped unless the build was
# configured with CUMEMCTL_INSTALL_SYMBOLS=ON), every manual page, the bash and zsh completion scripts
# (the same text that `cumemctl completion` writes), the Slurm IMEX channel prolog and epilog and the
# Slurm health check with their settings, whose default cumemctl is the installed binary, the NHC check
# and the node-problem-detector configuration, the report schema, and the systemd service and timer
# (checked with systemd-analyze verify where it is installed).
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
for f in imex-channel imex-prolog imex-epilog healthcheck; do [[ -x $slurm/$f ]] || fail "no executable $slurm/$f"; done
for f in imex-channels.conf healthcheck.conf settings.bash; do [[ -f $slurm/$f ]] || fail "no $slurm/$f"; done
for f in imex-channel healthcheck; do
  default=$(sed -n 's/^CUMEMCTL=\$here\/\(.*\)$/\1/p' "$slurm/$f")
  [[ $(realpath "$slurm/$default") == "$(realpath "$bin")" ]] || fail "$f's default cumemctl ($slurm/$default) is not $bin"
done
[[ -f $dest/usr/share/cumemctl/nhc/cumemctl.nhc ]] || fail "no NHC check"
[[ -f $dest/usr/share/cumemctl/prometheus/cumemctl-alerts.yaml ]] || fail "no Prometheus alerting rules"
[[ -f $dest/usr/share/cumemctl/k8s/cumemctl-monitor.json ]] || fail "no node-problem-detector configuration"
cmp -s "$dest/usr/share/cumemctl/schema/report.schema.json" "$src/schema/report.schema.json" ||
  fail "no report schema, or not the source's: $dest/usr/share/cumemctl/schema/report.schema.json"
for f in cumemctl-doctor.service cumemctl-doctor.timer; do
  [[ -f $dest/usr/lib/systemd/system/$f ]] || fail "no systemd unit $f"
done
# The units as systemd reads them, where systemd-analyze is at hand (Debian's systemd package): any
# message (an unknown key, a bad value, a command that is not there) fails. ExecStart's /usr/bin/cumemctl
# is the installed binary here (verify wants it executable); the page that Documentation= names is
# checked apart (verify's own man check reads the machine's pages).
units=$dest/usr/lib/systemd/system
if command -v systemd-analyze >/dev/null; then
  mkdir "$dest/verify"
  sed "s|/usr/bin/cumemctl|$bin|" "$units/cumemctl-doctor.service" >"$dest/verify/cumemctl-doctor.service"
  cp "$units/cumemctl-doctor.timer" "$dest/verify/"
  out=$(systemd-analyze verify --man=no "$dest/verify/cumemctl-doctor.timer" "$dest/verify/cumemctl-doctor.service" 2>&1) ||
    fail "systemd-analyze verify: $out"
  [[ -z $out ]] || fail "systemd-analyze verify: $out"
  rm -r "$dest/verify"
else
  echo "install test: systemd-analyze is not installed: the systemd units' syntax is not checked"
fi
for f in cumemctl-doctor.service cumemctl-doctor.timer; do
  page=$(sed -n 's/^Documentation=man:\(.*\)(1)$/\1/p' "$units/$f")
  [[ -f $dest/usr/share/man/man1/$page.1 ]] || fail "$f's Documentation= names no installed page ($page)"
done
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
