#!/usr/bin/env bash
# The one benchmark runner (docs/benchmarks.md): measures the given cumemctl binary against the floor
# and writes OUTPUT (JSON) and OUTPUT.md (the Markdown for docs/benchmarks.md).
#
#   bench/run.sh [OPTIONS] CUMEMCTL OUTPUT.json      on the GPU machine
#   bench/run.sh --smoke build/cmd/cumemctl /tmp/smoke.json      here, against the fake driver
#
# bench_floor and bench_copy_bandwidth are taken from the binary's build folder (BUILD/bench/).
# The Python that runs it (and floor.py, which needs cuda.bindings): $PYTHON, else the H200's
# /opt/torch/.venv/bin/python3 where it exists, else python3. `bench/run.sh --help` lists the options.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-}
if [[ -z $python ]]; then
  if [[ -x /opt/torch/.venv/bin/python3 ]]; then python=/opt/torch/.venv/bin/python3; else python=python3; fi
fi
exec "$python" "$here/bench.py" "$@"
