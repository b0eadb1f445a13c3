#!/usr/bin/env bash
# Runs a race for real: another user (nobody, through setpriv) swaps a file or a link in a loop
# (race_swap.py ARGS...) while root runs COMMAND again and again, for SECONDS. The race is won when WON
# (a shell test) succeeds after a run: then it says after how many runs, and fails. Otherwise it says
# how many runs held and succeeds. Test equipment for cases that need root.
#   race.sh SECONDS WON COMMAND -- SWAP-ARGS...
set -u
seconds=$1 won=$2 command=$3
shift 3
[[ ${1:-} == -- ]] && shift
here=$(dirname "$0")
setpriv --reuid=nobody --regid=nogroup --clear-groups python3 "$here/race_swap.py" "$@" &
swapper=$!
trap 'kill "$swapper" 2>/dev/null; wait "$swapper" 2>/dev/null' EXIT
sleep 0.2
runs=0 start=$SECONDS
while ((SECONDS - start < seconds)); do
  bash -c "$command" >/dev/null 2>&1
  runs=$((runs + 1))
  if bash -c "$won"; then
    echo "race won after $runs runs in $((SECONDS - start)) s: $command"
    exit 1
  fi
done
kill -0 "$swapper" 2>/dev/null || { echo "the swapper stopped early: the race was not run"; exit 2; }
echo "race held for $runs runs in $seconds s"
