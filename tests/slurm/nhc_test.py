#!/usr/bin/python3
"""The NHC check (packaging/nhc/cumemctl.nhc) against the fake driver. NHC itself is not a Debian
package here, so the check is sourced into bash beside stand-ins for what nhc gives a check, as NHC
1.4 does (github.com/mej/nhc: nhc's die, log and dbg, nhcmain_run_checks, the watchdog):
- nhc sources every /etc/nhc/scripts/*.nhc, then runs each configured check line with `eval $CHECK`
  ("check_cumemctl --expect-gpus 8"), a non-zero status being a failure;
- `die RET MESSAGE` logs "Health check failed: MESSAGE", marks the node offline with it and exits RET,
  except with NHC_CHECK_ALL=1, where it counts the failure and returns 0 (so the check returns itself);
- `log` writes nhc's log unless SILENT=1, `dbg` only with DEBUG=1;
- the watchdog ends the run TIMEOUT seconds after nhc started (bash's SECONDS counts from there).
    nhc_test.py [TEST...]
"""
import os
import subprocess
import sys
import tempfile
import time

from harness import PROFILES, SOURCE, check, describe, fake_env, main

QUICK_NO_IMEX = "driver,devices,capabilities,memory-health,fabric,inventory"
NHC_STANDIN = r"""
# What nhc gives a check (tests/slurm/nhc_test.py names the source).
FAIL_CNT=0 NHC_CHECK_ALL=${NHC_CHECK_ALL:-0} DEBUG=${DEBUG:-0} SILENT=0
die() { local RET=$1; shift; echo "OFFLINE $*"; if [[ $NHC_CHECK_ALL == 1 ]]; then ((FAIL_CNT++)); return 0; fi; exit "$RET"; }
log() { [[ $SILENT == 1 ]] || echo "LOG $*"; }
dbg() { [[ $DEBUG != 1 ]] || echo "DEBUG $*"; }
source "$NHC_SCRIPT"
SECONDS=${USED_SECONDS:-0}
eval "$CHECK"
RET=$?
echo "RET $RET FAIL_CNT $FAIL_CNT"
exit "$RET"
"""


def nhc(check_line, profile="h200", timeout=30, **env):
    """Runs one nhc.conf check line the way nhc does; (exit status, output, seconds)."""
    e = fake_env(profile, NHC_SCRIPT=os.path.join(SOURCE, "packaging/nhc/cumemctl.nhc"), CHECK=check_line,
                 TIMEOUT=str(timeout), **env)
    e.setdefault("CUMEMCTL", os.environ["CUMEMCTL"])
    start = time.monotonic()
    # The watchdog: nhc's run ends after TIMEOUT seconds, whatever the check does.
    p = subprocess.run(["timeout", "-s", "ALRM", str(timeout), "bash", "-c", NHC_STANDIN], env=e,
                       capture_output=True, text=True, timeout=timeout + 30)
    return p.returncode, p.stdout, time.monotonic() - start, p


def test_pass():
    rc, out, _, p = nhc("check_cumemctl", DEBUG="1")
    check(rc == 0 and "RET 0" in out and "OFFLINE" not in out, describe(p))
    check("DEBUG check_cumemctl: " in out and " doctor --quick --timeout 25 --format line" in out, describe(p))


def test_remap_failure():
    with tempfile.TemporaryDirectory() as d:
        profile = os.path.join(d, "remap.json")
        subprocess.run([sys.executable, os.path.join(PROFILES, "..", "make_profile.py"), "h200", profile,
                        'devices[0].nvml.remapped_rows={"failure": 1}'], check=True)
        # (The IMEX checks left out: they warn or pass as this machine's /dev has channels.)
        rc, out, _, p = nhc(f"check_cumemctl --checks {QUICK_NO_IMEX}", FAKECUDA_PROFILE=profile)
        check(rc == 1 and "OFFLINE cumemctl: fail memory-health nvidia0 row remap failed\n" in out and "RET" not in out,
              describe(p))
        # With NHC_CHECK_ALL=1 die returns: the check itself returns non-zero.
        rc, out, _, p = nhc("check_cumemctl", FAKECUDA_PROFILE=profile, NHC_CHECK_ALL="1")
        check(rc == 1 and "RET 1 FAIL_CNT 1" in out, describe(p))


def test_options_passed_through():
    rc, out, _, p = nhc("check_cumemctl --expect-gpus 8")
    check(rc == 1 and "OFFLINE cumemctl: fail inventory 1 GPUs, 8 expected" in out, describe(p))
    rc, out, _, p = nhc("check_cumemctl --checks nosuch")
    check(rc == 1 and "OFFLINE check_cumemctl: doctor refused its options: unknown check 'nosuch'" in out, describe(p))


def test_no_driver():
    rc, out, _, p = nhc("check_cumemctl", CUMEMCTL_LIBCUDA="/nonexistent/libcuda.so.1")
    check(rc == 1 and "OFFLINE cumemctl: fail driver no driver" in out, describe(p))
    rc, out, _, p = nhc("check_cumemctl", CUMEMCTL="/nonexistent/cumemctl")
    check(rc == 1 and "OFFLINE check_cumemctl: /nonexistent/cumemctl not found or not runnable" in out, describe(p))


def test_busy_full():
    with tempfile.TemporaryDirectory() as d:
        profile = os.path.join(d, "busy.json")
        subprocess.run([sys.executable, os.path.join(PROFILES, "..", "make_profile.py"), "h200", profile,
                        "devices[0].baseline_used=150042771456", "devices[0].context_bytes=536870912",
                        'devices[0].nvml.processes=[{"pid": 4194242, "used": 149481783296, "name": "/usr/bin/python3"}]'],
                       check=True)
        rc, out, _, p = nhc("check_cumemctl --full --checks context,vmm", FAKECUDA_PROFILE=profile)
        check(rc == 0 and "LOG check_cumemctl: cumemctl: busy context nvidia0 memory held by pid 4194242" in out
              and "OFFLINE" not in out, describe(p))


def test_timeout():
    """A hung NVML call: doctor's budget ends before nhc's watchdog, and the node is marked with the call."""
    rc, out, took, p = nhc("check_cumemctl", timeout=8, FAKENVML_INJECT="nvmlDeviceGetRemappedRows=hang")
    check(rc == 1 and "OFFLINE cumemctl: timeout memory-health nvidia0 nvmlDeviceGetRema" in out, describe(p))
    check(took < 8, f"took {took:.1f} s, past nhc's TIMEOUT of 8 s")
    rc, out, _, p = nhc("check_cumemctl", timeout=10, USED_SECONDS="7")
    check(rc == 1 and "OFFLINE check_cumemctl: no time left for doctor (nhc's TIMEOUT is 10 s, 7 s used)" in out,
          describe(p))


if __name__ == "__main__":
    main({"pass": test_pass, "remap_failure": test_remap_failure, "options_passed_through": test_options_passed_through,
          "no_driver": test_no_driver, "busy_full": test_busy_full, "timeout": test_timeout})
