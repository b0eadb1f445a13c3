#!/usr/bin/python3
"""fleet --require-signed against real MUNGE daemons: two munged of one key in a temporary folder, each
signing as its own node (--origin 127.0.0.2 and 127.0.0.3, the nodes' names), stopped on every exit
path. Reports signed by root on the node they name count; a forged pass signed on another node, a
report signed by another uid and a report in no credential count as not sent; the age is the
credential's; a credential decoded twice (replayed) still counts; without munged, exit 3.
    fleet_munge.py CUMEMCTL FLEET_REPORT_SH [RANK_REPORT]     (needs root, munged and munge: Debian's munge)
RANK_REPORT: a passing fabric-matrix rank report whose card names 127.0.0.3, signed or not as a doctor
report is.
"""
import atexit
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

CUMEMCTL, REPORT = sys.argv[1], sys.argv[2]
RANK = sys.argv[3] if len(sys.argv) > 3 else None  # a passing fabric-matrix rank report of host 127.0.0.3
work = tempfile.mkdtemp(prefix="cumemctl-munge.")
daemons = []


def stop():
    for p in daemons:
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
    shutil.rmtree(work, ignore_errors=True)


atexit.register(stop)
for sig in (signal.SIGINT, signal.SIGTERM):
    signal.signal(sig, lambda *_: sys.exit(1))


def start_munged(origin):
    sock = os.path.join(work, f"sock.{origin}")
    p = subprocess.Popen(["munged", "--foreground", "--force", f"--key-file={work}/key", f"--socket={sock}",
                          f"--pid-file={work}/pid.{origin}", f"--seed-file={work}/seed.{origin}",
                          f"--log-file={work}/log.{origin}", f"--origin={origin}"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    daemons.append(p)
    for _ in range(100):
        if os.path.exists(sock):
            return sock
        time.sleep(0.05)
    sys.exit(f"munged --origin {origin} did not start: {open(f'{work}/log.{origin}').read()}")


def signed(host, status, sock, name, timestamp=None, user=None):
    """A small doctor report of `host`, signed by the munged of `sock` (as `user`'s uid where given)."""
    report = subprocess.run([REPORT, host, status] + ([timestamp] if timestamp else []), capture_output=True,
                            check=True).stdout
    return sign(report, sock, name, user)


def sign(report, sock, name, user=None):
    """The bytes `report` in a credential of the munged of `sock`, in the file `name`."""
    prefix = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups"] if user else []
    cred = subprocess.run(prefix + ["munge", "-S", sock, "-z", "zlib"], input=report, capture_output=True,
                          check=True).stdout
    path = os.path.join(work, name)
    with open(path, "wb") as f:
        f.write(cred)
    return path


def fleet(*args):
    p = subprocess.run([CUMEMCTL, "fleet", "--json", *args], capture_output=True, text=True, timeout=60)
    return p.returncode, json.loads(p.stdout)


def expect(condition, what, got):
    if not condition:
        sys.exit(f"FAIL {what}: {json.dumps(got, indent=1)[:3000]}")
    print(f"ok   {what}")


def main():
    os.chmod(work, 0o755)
    with open(os.path.join(work, "key"), "wb") as f:
        f.write(os.urandom(1024))
    os.chmod(os.path.join(work, "key"), 0o600)
    a, b = start_munged("127.0.0.2"), start_munged("127.0.0.3")
    good = signed("127.0.0.2", "pass", a, "n2.munge")
    real = signed("127.0.0.3", "fail", b, "n3.munge")
    forged = signed("127.0.0.3", "pass", a, "forged-n3.munge")  # n2 writes a pass for n3
    forged4 = signed("127.0.0.4", "pass", a, "forged-n4.munge")  # and one for n4, which sent nothing
    user = signed("127.0.0.2", "pass", a, "user-n2.munge", user="65534")
    plain = os.path.join(work, "plain.json")
    with open(plain, "wb") as f:
        f.write(subprocess.run([REPORT, "127.0.0.4", "pass"], capture_output=True, check=True).stdout)

    common = ["--munge-socket", a, "--require-signed", "--expect", "127.0.0.[2-4]", "--max-age", "1h"]
    rc, r = fleet(*common, good, real, forged, forged4, plain)
    nodes = {n["host"]: n["status"] for n in r["results"]["nodes"]}
    expect(rc == 1 and nodes == {"127.0.0.2": "pass", "127.0.0.3": "fail", "127.0.0.4": "missing"},
           "a forged pass hides no failure, and makes no silent node present, under --require-signed", r)
    messages = [p["message"] for p in r["results"]["input_problems"]]
    expect(any("munged on 127.0.0.2 signed it" in m and "127.0.0.3" in m for m in messages) and
           any("no MUNGE credential" in m for m in messages), "each report that does not count is named", r)

    rc, r = fleet(*common, user, real)
    nodes = {n["host"]: n["status"] for n in r["results"]["nodes"]}
    expect(nodes.get("127.0.0.2") == "missing" and any("uid 65534 signed it" in p["message"]
                                                       for p in r["results"]["input_problems"]),
           "a report signed by another uid than root counts as not sent", r)

    old = signed("127.0.0.2", "pass", a, "old-text.munge", timestamp="2000-01-01T00:00:00Z")
    rc, r = fleet(*common, old, real)
    n2 = next(n for n in r["results"]["nodes"] if n["host"] == "127.0.0.2")
    expect(n2["status"] == "pass" and not n2["timestamp"].startswith("2000"),
           "the age is the credential's encode time, not the report's text", r)

    rc, r = fleet(*common, good, real)  # decoded above already: munged calls it replayed
    expect({n["host"]: n["status"] for n in r["results"]["nodes"]}.get("127.0.0.2") == "pass",
           "a credential decoded before (replayed) still counts", r)

    p = subprocess.run(f"cat {good} {real} | {CUMEMCTL} fleet --json --munge-socket {a} -", shell=True,
                       capture_output=True, text=True, timeout=60)
    r = json.loads(p.stdout)
    expect(p.returncode == 1 and r["results"]["failing_nodes"] == "127.0.0.3",
           "credentials one after another on standard input are read without --require-signed", r)

    p = subprocess.run([CUMEMCTL, "fleet", "--require-signed", "--expect", "127.0.0.2", "--max-age", "1h",
                        "--munge-socket", os.path.join(work, "none"), good], capture_output=True, text=True, timeout=60)
    expect(p.returncode == 3 and "munged does not answer" in p.stderr,
           "without munged, --require-signed exits 3 saying so", {"stderr": p.stderr})

    # The nodes known bound what is believed: without them, or without an age, signing proves too little.
    for drop, words in (("--expect", "--require-signed needs --expect"), ("--max-age", "--require-signed needs --max-age")):
        args = list(common)
        del args[args.index(drop):args.index(drop) + 2]
        rc, r = fleet(*args, good)
        expect(rc == 2 and r["errors"][0]["message"] == words, f"{words}: a usage error before any report is read", r)

    # A signed report of a host that is not expected is left out unread: its name is never looked up.
    stranger = signed("stranger.invalid", "fail", a, "stranger.munge")
    rc, r = fleet(*common, stranger, good, real)
    messages = [p["message"] for p in r["results"]["input_problems"]]
    expect(any("a report of stranger.invalid, which is not among the nodes expected" in m for m in messages) and
           not any("stranger.invalid, which counts as not sent" in m for m in messages),
           "a signed report of a host not expected is left out before its name is looked up", r)

    # Credentials cost munged's work and inflate: bounded per input, whoever made them (any user can).
    inner = sign(open(good, "rb").read(), a, "inner.munge")  # a signed report, signed again
    nested = sign(open(inner, "rb").read(), a, "nested.munge")
    rc, r = fleet(*common, nested, real)
    expect({n["host"]: n["status"] for n in r["results"]["nodes"]}.get("127.0.0.2") == "missing" and
           any("a MUNGE credential inside a credential: not decoded" in p["message"]
               for p in r["results"]["input_problems"]),
           "a credential inside a credential's payload is not decoded", r)
    bomb = open(sign(b"{}\n" * 340000, a, "bomb.munge"), "rb").read()  # 1.5 KB that munged inflates to 1 MB
    bombs = os.path.join(work, "bombs.munge")
    with open(bombs, "wb") as f:
        f.write(bomb * 40)
    rc, r = fleet(*common, bombs, good, real)
    problems = r["results"]["input_problems"]
    counted = sum(int(p["message"].split()[1]) + 20 for p in problems
                  if p["source"] == bombs and p["message"].startswith("and "))
    # Each payload is 340,000 lines that are not reports: 40 decoded would be 13.6 million problems.
    expect(any("payloads came to" in p["message"] and "the rest of its credentials are not decoded" in p["message"]
               for p in problems) and 0 < counted < 8 * 340000 and
           {n["host"]: n["status"] for n in r["results"]["nodes"]}.get("127.0.0.2") == "pass",
           "an input's payloads are bounded by its size: 40 inflating credentials", r)
    refused = os.path.join(work, "refused.munge")
    with open(refused, "w") as f:
        f.write("MUNGE:AwQ:\n" * 1000)
    rc, r = fleet(*common, refused, good, real)
    messages = [p["message"] for p in r["results"]["input_problems"]]
    expect(sum("that munged refuses" in m for m in messages) == 20 and
           any("munged refused 20 of its credentials: the rest are not decoded" in m for m in messages),
           "after 20 credentials that munged refuses, an input's others are not sent to it", r)

    # A fabric-matrix rank report speaks for the host its card names: signed there by root, or not sent.
    if RANK:
        with open(RANK, "rb") as f:
            rank = f.read()
        plain_rank = os.path.join(work, "rank.json")
        with open(plain_rank, "wb") as f:
            f.write(rank)
        rc, r = fleet(*common, good, real, plain_rank, sign(rank, a, "forged-rank-n3.munge"))
        messages = [p["message"] for p in r["results"]["input_problems"]]
        expect(rc == 1 and r["results"]["fabric_matrices"] == [] and
               any("a report of 127.0.0.3, which counts as not sent: it came in no MUNGE credential" in m
                   for m in messages) and
               any("a report of 127.0.0.3, which counts as not sent: munged on 127.0.0.2" in m for m in messages),
               "a fabric-matrix rank report unsigned, or signed on another node than its card's, counts as not sent",
               r)
        rc, r = fleet(*common, good, real, sign(rank, b, "rank-n3.munge"))
        expect([(m["run"], m["passed"]) for m in r["results"]["fabric_matrices"]] == [("signed", True)],
               "a fabric-matrix rank report that root signed on its card's host counts", r)

    # A signed report older than --max-age, copied in again, leaves its node stale: it is not present.
    time.sleep(2.1)
    rc, r = fleet(*common[:-1], "1s", good, real)
    expect({n["host"]: n["status"] for n in r["results"]["nodes"]}.get("127.0.0.2") == "stale",
           "a signed report older than --max-age leaves its node stale", r)


if __name__ == "__main__":
    main()
