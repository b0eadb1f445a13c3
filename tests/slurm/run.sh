#!/usr/bin/env bash
# The fleet stage of scripts/test.sh: docs/fleet.md's Slurm, pdsh and Prometheus commands (fabric-matrix
# under srun among them), the per-job IMEX channel prolog and epilog and the health check
# (packaging/slurm), the NHC check and node-problem-detector's plugin (packaging/nhc, packaging/k8s) and what
# the systemd service runs (packaging/systemd), run for real against the fake driver of the build in
# BUILD_DIR, on a one-machine Slurm cluster (cluster.sh).
# Prints each test's time.
#   tests/slurm/run.sh BUILD_DIR
# Needs root and Debian's slurm-wlm, pdsh, prometheus-node-exporter, prometheus (promtool) and
# python3-prometheus-client (scripts/setup.sh installs them). Without them it says what is missing and
# exits 0 (skipped), except in CI (CI or CUMEMCTL_CI set), where it fails.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
source_dir=$(cd "$here/../.." && pwd)

missing=()
for tool in slurmctld slurmd srun sinfo squeue scancel pdsh dshbak prometheus-node-exporter promtool setpriv mpirun; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
/usr/bin/python3 -c 'import prometheus_client' 2>/dev/null || missing+=(python3-prometheus-client)
[[ $(id -u) -eq 0 ]] || missing+=("root (slurmd starts jobs as their users, the prolog makes device nodes)")
if ((${#missing[@]})); then
  if [[ -n ${CI:-}${CUMEMCTL_CI:-} ]]; then
    echo "fleet tests: FAILED: missing in CI: ${missing[*]} (scripts/setup.sh installs the packages; run as root)" >&2
    exit 1
  fi
  echo "fleet tests: SKIPPED: missing ${missing[*]} (scripts/setup.sh installs the packages; run as root)"
  exit 0
fi

export CUMEMCTL=$build/cmd/cumemctl FAKECUDA=$build/tests/libfakecuda.so FAKENVML=$build/tests/libfakenvml.so
export PROFILES=$source_dir/tests/fakecuda/profiles SOURCE=$source_dir
for f in "$CUMEMCTL" "$FAKECUDA" "$FAKENVML"; do
  [[ -f $f ]] || { echo "fleet tests: $f is not built" >&2; exit 1; }
done
py=/usr/bin/python3
status=0
start=$SECONDS

if [[ ${1:-} != --in-cluster ]] && [[ ${2:-} == --in-cluster ]]; then
  # Inside the cluster (cluster.sh runs this): the tests that need Slurm.
  echo "== fleet tests on the cluster"
  (cd "$here" && $py fleet_test.py srun_doc srun_constrained srun_drain) || status=1
  (cd "$here" && $py imex_test.py jobs) || status=1
  (cd "$here" && $py matrix_test.py srun_pass srun_import_refused srun_pmix srun_pmix_missing_rank srun_pmix_version) ||
    status=1
  exit "$status"
fi
if [[ ${2:-} == --in-controller-cluster ]]; then
  # Inside the cluster whose PrologSlurmctld and EpilogSlurmctld choose the IMEX channels.
  echo "== IMEX channels chosen on the controller"
  (cd "$here" && IMEX_CHANNELS_FROM=controller $py imex_test.py jobs) || status=1
  exit "$status"
fi
if [[ ${2:-} == --in-healthcheck-cluster ]]; then
  # Inside the cluster whose HealthCheckProgram is packaging/slurm/healthcheck.
  echo "== the Slurm health check on the cluster"
  (cd "$here" && $py healthcheck_test.py cluster) || status=1
  exit "$status"
fi

echo "== fleet tests without the cluster (pdsh in exec mode, Prometheus, NHC, node-problem-detector, the IMEX scripts by hand)"
(cd "$here" && $py fleet_test.py pdsh_doc pdsh_exit) || status=1
(cd "$here" && $py prometheus_test.py) || status=1
(cd "$here" && $py matrix_test.py mpirun_pmix) || status=1
(cd "$here" && $py nhc_test.py) || status=1
(cd "$here" && $py npd_test.py) || status=1
(cd "$here" && $py systemd_test.py) || status=1
(cd "$here" && $py imex_test.py by_hand_start_end by_hand_taken by_hand_admin_run_beside_jobs by_hand_epilog_fails by_hand_no_imex by_hand_bad_settings by_hand_unsafe_paths by_hand_unsafe_programs by_hand_fuse_program \
  by_hand_state_dir_checked_first by_hand_job_id_collisions by_hand_controller by_hand_switch \
  by_hand_no_descriptors_to_programs) || status=1

# The cluster, with the IMEX channel prolog and epilog of a temporary folder as Prolog and Epilog.
imex=$(mktemp -d /tmp/cumemctl-imex.XXXXXX)
hc=$(mktemp -d /tmp/cumemctl-hc.XXXXXX)
trap 'rm -rf "$imex" "$hc"' EXIT
(cd "$here" && $py imex_test.py prepare "$imex")
cluster_start=$SECONDS
IMEX_TEST_DIR=$imex "$here/cluster.sh" --prolog "$imex/scripts/imex-prolog" --epilog "$imex/scripts/imex-epilog" \
  -- "$0" "$build" --in-cluster || status=1
echo "fleet tests: the cluster's part took $((SECONDS - cluster_start)) s (start, tests, stop)"
# A cluster whose PrologSlurmctld and EpilogSlurmctld (the same scripts) choose the channels.
imexc=$(mktemp -d /tmp/cumemctl-imex.XXXXXX)
trap 'rm -rf "$imex" "$hc" "$imexc"' EXIT
(cd "$here" && $py imex_test.py prepare "$imexc" controller)
cluster_start=$SECONDS
IMEX_TEST_DIR=$imexc "$here/cluster.sh" --prolog "$imexc/scripts/imex-prolog" --epilog "$imexc/scripts/imex-epilog" \
  --conf "PrologSlurmctld=$imexc/scripts/imex-prolog" --conf "EpilogSlurmctld=$imexc/scripts/imex-epilog" \
  -- "$0" "$build" --in-controller-cluster || status=1
echo "fleet tests: the controller's channels' cluster took $((SECONDS - cluster_start)) s (start, tests, stop)"

echo "== the Slurm health check by hand (packaging/slurm/healthcheck --dry-run)"
(cd "$here" && $py healthcheck_test.py by_hand_decisions by_hand_long_reason by_hand_hang by_hand_guard by_hand_one_at_a_time \
  by_hand_changed_meanwhile by_hand_bad_settings) || status=1
# A second cluster, whose slurmd runs the health check every 2 s: it drains and resumes nodes, which the
# tests of the first one must not see.
(cd "$here" && $py healthcheck_test.py prepare "$hc")
cluster_start=$SECONDS
HEALTHCHECK_TEST_DIR=$hc "$here/cluster.sh" --conf "HealthCheckProgram=$hc/scripts/healthcheck" --conf HealthCheckInterval=2 \
  -- "$0" "$build" --in-healthcheck-cluster || status=1
echo "fleet tests: the health check's cluster took $((SECONDS - cluster_start)) s (start, tests, stop)"
echo "fleet tests: $( ((status == 0)) && echo passed || echo FAILED) in $((SECONDS - start)) s"
exit "$status"
