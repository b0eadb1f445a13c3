#!/usr/bin/env bash
# Sends a signal to a cumemctl run once it is under way, bpftrace-style for the signal cases:
#     signal_run.sh SIGNAL WHEN DIR [--child] -- COMMAND...
# starts COMMAND in the background (stdout to DIR/out, stderr to DIR/err), waits (up to 90 s, so that a
# loaded machine is no problem) until WHEN holds -- "stderr:TEXT": TEXT appears in its stderr (the fake
# driver's "fakecuda: delay ..." line), "file:PATH": PATH exists -- sends SIGNAL (INT or TERM) to it,
# waits for it, then writes its stdout and stderr through and exits with its exit code. It fails (exit
# 99) when WHEN never held, and (exit 98) when a process that was its child at the signal still exists
# afterwards: a second process must be ended and reaped. With --child the signal goes to COMMAND's
# child instead (COMMAND is a wrapper such as strace that runs cumemctl). With SIGNAL_RUN_AFTER_MS set,
# the signal goes that long after WHEN held. With SIGNAL_RUN_WITHIN_MS set, it fails (exit 97) where
# COMMAND took longer than that to exit after the signal; half as long again in the sanitizer build
# (ASAN_OPTIONS set), whose exit adds LeakSanitizer's scan of the heap to what the binary itself does.
set -u
signal=$1 when=$2 dir=$3 to_child=0
shift 3
[[ $1 == --child ]] && to_child=1 && shift
shift
"$@" >"$dir/out" 2>"$dir/err" &
pid=$!
held=0
for _ in $(seq 900); do
  case $when in
    stderr:*) grep -qF -- "${when#stderr:}" "$dir/err" && held=1 ;;
    file:*) [[ -e ${when#file:} ]] && held=1 ;;
  esac
  ((held)) && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
target=$pid
((to_child)) && target=$(pgrep -P "$pid" | head -1)
children=$(pgrep -P "${target:-$pid}" | tr '\n' ' ')
if ((held)); then
  [[ -n ${SIGNAL_RUN_AFTER_MS:-} ]] && sleep "$(awk -v ms="$SIGNAL_RUN_AFTER_MS" 'BEGIN {print ms / 1000}')"
  sent=$(date +%s%N)
  kill -"$signal" "${target:-$pid}"
fi
wait "$pid"
rc=$?
took_ms=$((held ? ($(date +%s%N) - sent) / 1000000 : 0))
cat "$dir/out"
cat "$dir/err" >&2
if ((!held)); then
  echo "signal_run: '$when' never held; the command exited $rc first" >&2
  exit 99
fi
for c in $children; do
  if kill -0 "$c" 2>/dev/null; then
    echo "signal_run: child $c ($(cat /proc/"$c"/cmdline 2>/dev/null | tr '\0' ' ')) still exists" >&2
    exit 98
  fi
done
within_ms=${SIGNAL_RUN_WITHIN_MS:-}
[[ -n $within_ms && -n ${ASAN_OPTIONS:-} ]] && within_ms=$((within_ms * 3 / 2))
if [[ -n $within_ms ]] && ((took_ms > within_ms)); then
  echo "signal_run: it exited $rc ${took_ms} ms after SIG$signal, more than ${within_ms} ms" >&2
  exit 97
fi
echo "signal_run: sent SIG$signal to ${target:-$pid} (children then: ${children:-none}); it exited $rc" >&2
exit "$rc"
