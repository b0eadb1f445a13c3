# The neighbour of bench/doctor_busy.sh and bench/held_gpu.sh, sourced by both: bench_hold_memory holding
# all of GPU 0's memory but LEAVE MiB while its stdin (our pipe) is open.
#
#   start_holder HOLD_BINARY LEAVE_MIB JSON_FILE   starts it and waits for its "ready": sets holder_pid,
#                                                  holder_in (its stdin) and holder (its JSON line, also
#                                                  written to JSON_FILE); 1 (it is stopped) when not ready
#   stop_holder                                    closes its stdin: it ends and its memory goes back

start_holder() {
  local ready=""
  coproc HOLD { exec "$1" --device 0 --leave "$2"; }
  holder_pid=$HOLD_PID
  holder_in=${HOLD[1]}
  read -r -t 120 holder <&"${HOLD[0]}" || holder=""
  read -r -t 120 ready <&"${HOLD[0]}" || ready=""
  echo "$holder" >"$3"
  if [[ $ready != ready ]]; then
    kill "$holder_pid" 2>/dev/null
    return 1
  fi
}

stop_holder() {
  eval "exec $holder_in>&-"
  kill "$holder_pid" 2>/dev/null
  wait "$holder_pid" 2>/dev/null
}
