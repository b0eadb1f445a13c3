#!/usr/bin/env bash
# The GPU tier: runs the built cumemctl against the real driver and compares its answers with direct
# driver queries (tests/gpu/, through cuda.bindings). Writes every test's output and a summary to one
# file (default gpu-results.txt, or $1). Exit 0 all passed, 1 something failed, 125 no GPU here.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-gpu-results.txt}
binary=${CUMEMCTL:-build/cmd/cumemctl}
binary_path=$(realpath -m "$binary")  # as given from the repository's root, absolute or not (the tests cd)
python=${PYTHON:-python3}
: >"$out"
{
  echo "# cumemctl GPU tier, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# host $(hostname); binary $binary ($("$binary" --version 2>&1))"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/# gpu: /'
} >>"$out"
passed=0 failed=0 skipped=0
for t in tests/gpu/test_*.py tests/gpu/test_*.sh; do
  [[ -e $t ]] || continue
  echo "== $t" >>"$out"
  start=$(date +%s.%N)
  case $t in
    *.py) (cd tests/gpu && "$python" "$(basename "$t")" "$binary_path") >>"$out" 2>&1 ;;
    *.sh) bash "$t" "$binary" >>"$out" 2>&1 ;;
  esac
  rc=$?
  secs=$(awk "BEGIN{printf \"%.2f\", $(date +%s.%N) - $start}")
  case $rc in
    0) passed=$((passed + 1)); echo "== PASS $t (${secs}s)" >>"$out" ;;
    125) skipped=$((skipped + 1)); echo "== SKIP $t" >>"$out" ;;
    *) failed=$((failed + 1)); echo "== FAIL $t (exit $rc, ${secs}s)" >>"$out" ;;
  esac
done
echo "gpu tier: $passed passed, $failed failed, $skipped skipped" | tee -a "$out"
if ((failed > 0)); then exit 1; fi
if ((passed == 0 && skipped > 0)); then exit 125; fi
exit 0
