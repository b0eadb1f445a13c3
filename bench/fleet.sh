#!/usr/bin/env bash
# fleet at cluster scale (docs/benchmarks.md, "fleet"): one doctor report of the fake driver's 4-GPU
# gb200x4 profile copied into fleets of 1,000 and 10,000 nodes by tests/cli/make_fleet.py (one JSON
# document a line, two nodes failing), and a stream of 100,000 nodes (the 10,000 again ten times under
# other names) on standard input. Each is timed as a whole process with its peak resident memory, beside
# Python reading the same lines (json.loads of each) and, where given, another cumemctl binary.
#
#   bench/fleet.sh BUILD [OTHER_CUMEMCTL]     BUILD: a build folder (cmd/cumemctl, tests/libfakecuda.so)
#
# Needs GNU time (/usr/bin/time) and about 2.2 GB in $TMPDIR. It judges nothing: it prints a Markdown
# table for docs/benchmarks.md. FLEET_RUNS (default 3) runs of each; the table gives the median.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?usage: bench/fleet.sh BUILD [OTHER_CUMEMCTL]}" && pwd)
other=${2:-}
runs=${FLEET_RUNS:-3}
work=$(mktemp -d "${TMPDIR:-/tmp}/cumemctl-fleet-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
export FAKECUDA_PROFILE=$here/tests/fakecuda/profiles/gb200x4.json
export CUMEMCTL_LIBCUDA=$build/tests/libfakecuda.so CUMEMCTL_LIBNVML=$build/tests/libfakenvml.so
cumemctl=$build/cmd/cumemctl
"$cumemctl" doctor --json >"$work/one.json" || true  # warns (no IMEX channel here): exit 0 or 1
python3 "$here/tests/cli/make_fleet.py" "$work/one.json" 1000 --fail 17,500 >"$work/1k.json"
python3 "$here/tests/cli/make_fleet.py" "$work/one.json" 10000 --fail 17,5000 >"$work/10k.json"
# 100,000 nodes never on disk: the 10,000 ten times, each pass renaming its hosts ("gpu" -> "r3gpu").
cat >"$work/100k.sh" <<EOF
for r in 0 1 2 3 4 5 6 7 8 9; do sed "s/\"host\": \"gpu/\"host\": \"r\${r}gpu/" "$work/10k.json"; done
EOF

# Median wall seconds and peak resident MB of a command over $runs runs: "12.34 567".
measure() {
  local i
  for ((i = 0; i < runs; i++)); do
    /usr/bin/time -f '%e %M' -o "$work/time" bash -c "$1" >/dev/null 2>&1 || true
    tail -n 1 "$work/time"
  done | sort -n | awk '{w[NR]=$1; m[NR]=$2} END {i=int((NR+1)/2); printf "%.2f %d\n", w[i], m[i]/1024}'
}

python_lines='import json, sys
for line in open(sys.argv[1], "rb"):
    d = json.loads(line)
    (d["host"], d["results"]["status"])'
printf '| nodes (input) | cumemctl fleet: s, MB resident | Python json.loads of each line: s, MB |%s\n' \
  "${other:+ other binary: s, MB |}"
printf '|---|---|---|%s\n' "${other:+---|}"
# The drain list is only of nodes expected (fleet refuses --format nodelist without --expect).
declare -A expect=([1k]='gpu[001-999],gpu1000' [10k]='gpu[001-999],gpu[1000-9999],gpu10000')
for n in 1k 10k; do
  size=$(du -m "$work/$n.json" | cut -f1)
  read -r w m < <(measure "'$cumemctl' fleet '$work/$n.json' --expect '${expect[$n]}' --format nodelist")
  read -r pw pm < <(measure "python3 -c '$python_lines' '$work/$n.json'")
  row="| ${n/k/,000} ($size MB) | $w s, $m MB | $pw s, $pm MB |"
  if [[ -n $other ]]; then
    read -r ow om < <(measure "'$other' fleet '$work/$n.json' --expect '${expect[$n]}' --format nodelist")
    row+=" $ow s, $om MB |"
  fi
  echo "$row"
done
runs=1
read -r w m < <(measure "bash '$work/100k.sh' | '$cumemctl' fleet - --expect 'r[0-9]${expect[10k]//,/,r[0-9]}' --format nodelist")
echo "| 100,000 (10.7 GB, a pipe) | $w s, $m MB (sed's ten passes included) | - |${other:+ - |}"
