#!/bin/bash
# Starts the ranks of a distributed fabric-matrix run as a launcher would, on this machine: rank R with
# CUMEMCTL_HOST=node-R and --rank R --ranks N, in the background; then waits for all of them.
#   matrix_ranks.sh CUMEMCTL FOLDER N [fabric-matrix options...]
# MATRIX_SKIP="2 3": ranks not started (a rank that never comes). MATRIX_ENV_R="NAME=VALUE ...": more
# environment for rank R only. MATRIX_TERM=R: SIGTERM to rank R once its card is in the folder.
# Each rank's JSON goes to OUT.R.json and its exit code to OUT.R.rc (OUT: $MATRIX_OUT, else FOLDER);
# rank 0's JSON is printed (when rank 0 was started), and the script exits with rank 0's exit code.
set -u
bin=$1 dir=$2 n=$3
shift 3
out=${MATRIX_OUT:-$dir}
mkdir -p "$dir"
chmod 700 "$dir"
pids=()
for ((r = 0; r < n; r++)); do
    case " ${MATRIX_SKIP:-} " in *" $r "*) continue ;; esac
    extra_var="MATRIX_ENV_$r"
    (
        # shellcheck disable=SC2086
        env CUMEMCTL_HOST="node-$r" ${!extra_var:-} "$bin" fabric-matrix --dir "$dir" --rank "$r" --ranks "$n" \
            --json "$@" >"$out.$r.json" 2>"$out.$r.err" &
        echo $! >"$out.$r.pid"
        wait $!
        echo $? >"$out.$r.rc"
    ) &
    pids+=($!)
    if [[ "${MATRIX_TERM:-}" == "$r" ]]; then
        for _ in $(seq 1 500); do
            [[ -e "$dir/${MATRIX_RUN:-cumemctl}.card.$r" ]] && break
            sleep 0.01
        done
        for _ in $(seq 1 500); do
            [[ -s "$out.$r.pid" ]] && break
            sleep 0.01
        done
        kill -TERM "$(cat "$out.$r.pid")"
    fi
done
wait "${pids[@]}"
if [[ -e "$out.0.json" ]]; then
    cat "$out.0.json"
    exit "$(cat "$out.0.rc")"
fi
