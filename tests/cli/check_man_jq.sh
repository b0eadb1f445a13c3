#!/usr/bin/env bash
# Runs the jq examples of the manual, roff escapes undone (\- to -, \e to \), with cumemctl the built
# binary (on PATH):
# - every line between a '.\" tested:' comment and its .EE, each on its own: each must exit 0 and
#   write something;
# - every block between a '.\" tested as one script, exit N:' comment and its .EE, as one script, in a
#   folder whose reports/ holds a fleet's doctor reports (gpu001-gpu006, SLURM_JOB_NODELIST naming
#   gpu[001-007]: gpu002 fails memory-health on a GPU, gpu004's report is a year old, gpu005's driver is
#   12.4, gpu007 sent nothing, gpu006.json is not JSON): it must exit N and write something.
# The environment (the fake driver) is the caller's; what the examples write is printed, for the case
# to match.
#   check_man_jq.sh CUMEMCTL MAN_DIR
set -uo pipefail
cli=$(dirname "$0")
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
ln -s "$(realpath "$1")" "$bin/cumemctl"
export PATH="$bin:$PATH"
fail=0 count=0
roff() { sed -e 's/\\-/-/g' -e 's/\\e/\\/g'; }
for page in "$2"/*.1; do
  while IFS= read -r line; do
    count=$((count + 1))
    out=$(bash -c "$line" 2>&1)
    rc=$?
    if [[ $rc != 0 || -z $out ]]; then
      echo "FAIL $(basename "$page"): $line (exit $rc)"; echo "$out" | head -5; fail=1
    else
      echo "ok   $(basename "$page"): $line"; echo "$out" | head -3 | sed 's/^/       /'
    fi
  done < <(awk '/^\.\\" tested:/{on=1; next} /^\.EE/{on=0} on' "$page" | roff)
done

# The fleet the scripts read.
fleet=$bin/fleet
mkdir -p "$fleet/reports"
if ! cumemctl doctor --quick --json > "$bin/one.json" ||
  ! "$cli/make_fleet.py" "$bin/one.json" 6 --fail 2 --old 4 > "$bin/all.json"; then
  echo "FAIL: no fleet to read"; exit 1
fi
while IFS= read -r doc; do
  host=$(jq -r .host <<<"$doc")
  if [[ $host == gpu005 ]]; then doc=$(jq -c '.driver.version_string = "12.4"' <<<"$doc"); fi
  printf '%s\n' "$doc" > "$fleet/reports/$host.json"
done < "$bin/all.json"
printf '{"x":1\n' > "$fleet/reports/gpu006.json"
export SLURM_JOB_NODELIST='gpu[001-007]'
for page in "$2"/*.1; do
  # One script per marked block: "N<TAB>line" for its first line, "<TAB>line" for the others.
  while IFS= read -r -d '' block; do
    count=$((count + 1))
    want=${block%%$'\n'*}
    script=${block#*$'\n'}
    out=$(cd "$fleet" && bash -c "$script" 2>&1)
    rc=$?
    if [[ $rc != "$want" || -z $out ]]; then
      echo "FAIL $(basename "$page"): the script below (exit $rc, not $want)"; echo "$script"; echo "$out" | head -5
      fail=1
    else
      echo "ok   $(basename "$page"): the script $(head -1 <<<"$script") ... (exit $rc)"; echo "$out" | sed 's/^/       /'
    fi
  done < <(awk '/^\.\\" tested as one script, exit [0-9]+:/{on=1; n=$0; sub(/^.*exit /, "", n); sub(/:.*/, "", n);
                                                             printf "%s\n", n; next}
                /^\.EE/{if (on) printf "%c", 0; on=0} on' "$page" | roff)
done
[[ $count -gt 0 ]] || { echo "no tested line in $2"; exit 1; }
exit $fail
