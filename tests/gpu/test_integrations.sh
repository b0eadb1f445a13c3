#!/usr/bin/env bash
# GPU tier: doctor as the Slurm health check, NHC, node-problem-detector and NFD call it, on the real
# driver. No Slurm, NHC, NPD or NFD here: their doctor calls and decision logic are run as those tools run them.
#
#     tests/gpu/test_integrations.sh [BINARY]      (default build/cmd/cumemctl)
#
# 1. The Slurm health check (packaging/slurm/healthcheck --dry-run; no scontrol here, the node's state
#    given): a healthy node stays in service (pass or warn, the quick check in under 5 s), a node it
#    drained is resumed, an administrator's drain is left alone, the full check on an idle node
#    (FULL_WHEN_IDLE=yes) in under 30 s, and a failure (--expect-gpus 99: the inventory check fails)
#    drains with "cumemctl-hc: fail inventory ..." of at most 70 characters.
# 2. The NHC check (packaging/nhc/cumemctl.nhc) under NHC's calling conventions: passes.
# 3. node-problem-detector's rule (packaging/k8s/cumemctl-monitor.json) as NPD runs it: status 0 within
#    its 5 s timeout.
# 4. doctor --format nfd --expiry 1h --output: labels by NFD's rules (tests/nfd/check_nfd.py): vmm,
#    memory-health=pass, the GPU count that nvidia-smi lists.
# 5. doctor --format junit: well-formed XML with one test case per check and device and no failure
#    (tests/junit/check_junit.py where python3-lxml and python3-junitparser are installed).
# Exit 0 pass, 1 fail, 125 no GPU.
set -uo pipefail
cd "$(dirname "$0")/../.."
binary=$(realpath -m "${1:-build/cmd/cumemctl}")
python=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! nvidia-smi -L >/dev/null 2>&1; then echo "SKIP: no GPU (nvidia-smi -L failed)"; exit 125; fi
gpus=$(nvidia-smi -L | grep -c '^GPU ')
status=0
fail() { echo "FAIL: $*"; status=1; }
ok() { echo "ok: $*"; }

# 1. The Slurm health check's doctor call and decisions.
conf=$tmp/healthcheck.conf
settings() { printf 'CUMEMCTL=%s\nTIMEOUT=30\nLOG_FILE=%s/log\n%s' "$binary" "$tmp" "${1:-}" >"$conf"; }
hc() { SLURMD_NODENAME=h200-test packaging/slurm/healthcheck --conf "$conf" --dry-run "$@"; }
settings
out=$(hc --node-state IDLE); rc=$?
echo "$out"
secs=$(sed -n 's/.*quick check in \([0-9]*\) s, exit 0: cumemctl: \(pass\|warn\) .*/\1/p' <<<"$out")
[[ $rc -eq 0 && -n $secs && $secs -lt 5 && $out == *": in service"* && $out != *"would run"* ]] &&
  ok "healthy: in service, the quick check in $secs s" || fail "healthy node (exit $rc)"
out=$(hc --node-state IDLE+DRAIN --node-reason "cumemctl-hc: fail memory-health GPU0 row remap failed")
echo "$out"
[[ $out == *"would run: scontrol update NodeName=h200-test State=RESUME"* ]] && ok "its own drain resumed" ||
  fail "its own drain was not resumed"
out=$(hc --node-state IDLE+DRAIN --node-reason "admin: new fan")
echo "$out"
[[ $out == *"by someone else ('admin: new fan'): left as it is"* && $out != *"would run"* ]] &&
  ok "an administrator's drain left alone" || fail "an administrator's drain was touched"
settings "FULL_WHEN_IDLE=yes"$'\n'
out=$(hc --node-state IDLE); rc=$?
echo "$out"
secs=$(sed -n 's/.*full check in \([0-9]*\) s, exit 0: cumemctl: \(pass\|warn\|busy\) .*/\1/p' <<<"$out")
[[ $rc -eq 0 && -n $secs && $secs -lt 30 && $out != *"would run"* ]] && ok "full check on an idle node in $secs s" ||
  fail "full check on an idle node (exit $rc)"
settings "DOCTOR_OPTIONS=--expect-gpus 99"$'\n'
out=$(hc --node-state MIXED)
echo "$out"
reason=$(sed -n "s/.*would run: scontrol update NodeName=h200-test State=DRAIN 'Reason=\(.*\)'$/\1/p" <<<"$out")
[[ $reason == "cumemctl-hc: fail inventory $gpus GPU"*", 99 expected"* && ${#reason} -le 70 ]] &&
  ok "a failure drains: '$reason'" || fail "a failure did not drain with the inventory reason: '$reason'"
grep -q "cumemctl healthcheck on h200-test: drained" "$tmp/log" && ok "decisions logged to LOG_FILE" || fail "no log"

# 2. NHC: check_cumemctl sourced beside stand-ins for nhc's die, log and dbg, with nhc's TIMEOUT.
out=$(CUMEMCTL=$binary TIMEOUT=30 bash -c '
  die() { shift; echo "OFFLINE $*"; exit 1; }; log() { echo "LOG $*"; }; dbg() { :; }
  source packaging/nhc/cumemctl.nhc; check_cumemctl; echo "RET $?"' 2>&1)
echo "$out"
[[ $out == *"RET 0"* && $out != *OFFLINE* ]] && ok "NHC check passes" || fail "NHC check: $out"

# 3. node-problem-detector's rule, as NPD runs it (path, args, the rule's timeout).
mkdir "$tmp/bin" && ln -s "$binary" "$tmp/bin/cumemctl"
npd=$("$python" - "$tmp/bin" <<'PY'
import json, os, subprocess, sys, time
c = json.load(open("packaging/k8s/cumemctl-monitor.json"))
r = c["rules"][0]
start = time.monotonic()
p = subprocess.run([r["path"], *r["args"]], env=dict(os.environ, PATH=sys.argv[1] + ":/usr/bin:/bin"),
                   capture_output=True, text=True, timeout=5)
print(f"status {p.returncode} in {time.monotonic() - start:.2f} s: {p.stdout.strip()[:80]}")
PY
)
echo "$npd"
[[ $npd == "status 0 in "* ]] && ok "NPD rule OK" || fail "NPD rule: $npd"

# 4. Feature labels.
mkdir "$tmp/features.d"
"$binary" doctor --quick --format nfd --expiry 1h --output "$tmp/features.d/cumemctl"; rc=$?
cat "$tmp/features.d/cumemctl" 2>/dev/null
"$python" tests/nfd/check_nfd.py "$tmp/features.d/cumemctl" "gpu-count=$gpus" vmm=true memory-health=pass >/dev/null &&
  [[ $rc -eq 0 && $(ls -A "$tmp/features.d") == cumemctl ]] && ok "NFD labels" || fail "NFD labels (exit $rc)"

# 5. JUnit XML.
"$binary" doctor --format junit --output "$tmp/doctor.xml"; rc=$?
if "$python" -c 'import lxml, junitparser' 2>/dev/null; then
  "$python" tests/junit/check_junit.py "$tmp/doctor.xml" "driver=passed" "memory-health GPU0=passed" &&
    [[ $rc -eq 0 ]] && ok "JUnit XML (XSD, junitparser)" || fail "JUnit XML (exit $rc)"
else
  "$python" -c 'import sys, xml.etree.ElementTree as E; s = E.parse(sys.argv[1]).getroot()[0]; assert int(s.get("tests")) > 3 and s.get("failures") == "0", s.attrib; print(s.attrib)' "$tmp/doctor.xml" &&
    [[ $rc -eq 0 ]] && ok "JUnit XML (well-formed; no lxml/junitparser here)" || fail "JUnit XML (exit $rc)"
fi
exit "$status"
