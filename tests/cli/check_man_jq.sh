#!/usr/bin/env bash
# Runs the jq one-liners of the manual: every line between a '.\" tested:' comment and its .EE, roff
# escapes undone (\- to -, \e to \), with cumemctl the built binary (on PATH); each must exit 0 and
# write something. The environment (the fake driver) is the caller's.
#   check_man_jq.sh CUMEMCTL MAN_DIR
set -uo pipefail
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
ln -s "$(realpath "$1")" "$bin/cumemctl"
export PATH="$bin:$PATH"
fail=0 count=0
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
  done < <(awk '/^\.\\" tested:/{on=1; next} /^\.EE/{on=0} on' "$page" | sed -e 's/\\-/-/g' -e 's/\\e/\\/g')
done
[[ $count -gt 0 ]] || { echo "no tested line in $2"; exit 1; }
exit $fail
