"""GPU tier: `cumemctl imex-setup` on a real node, compared with what the driver does directly.

Needs root, CUMEMCTL_GPU_ALLOW_MKNOD=1 (it makes and removes nodes in /dev) and a driver that registers
nvidia-caps-imex-channels; exits 125 (skipped) otherwise.
Every fabric check of the driver runs in a fresh process (the driver may remember a process's channel):
direct ones through ctypes straight into libcuda (so that they run as nobody too, without cuda.bindings),
cumemctl's through its own --verify child.

1. Before (only when the node has no channel node): `imex-setup --dry-run --verify` fails with
   CUDA_ERROR_NOT_PERMITTED and the IMEX diagnosis, a direct fabric cuMemCreate fails the same way, and
   so does `cumemctl create --handle-type fabric --export`.
2. `imex-setup --verify` makes channel0 (the major from /proc/devices) and verifies it.
3. After: a direct fabric cuMemCreate and export succeed, with the granularity cumemctl reported, and
   `cumemctl create --handle-type fabric --export` passes.
4. A rerun reports unchanged.
5. Isolation: with channel0 root's and 0600, nobody's --check --verify fails NOT_PERMITTED, as a direct
   cuMemCreate as nobody does; after `--channel 1 --owner nobody --verify`, both pass as nobody. A plain
   run over both then keeps them as they are (access is never widened on its own) and nobody's fabric
   memory still works; --force gives channel0 the driver's mode again.
6. The nodes and folder this test made are removed again (KEEP_IMEX_CHANNELS=1 keeps them).

IMEX_TEST_DEV_ROOT, IMEX_TEST_PROC_DEVICES and IMEX_TEST_PARAMS point it (and cumemctl) at another
device root and /proc files, to rehearse it against the fake driver (CUMEMCTL_LIBCUDA, FAKECUDA_*).
"""
import json
import os
import stat
import subprocess
import sys

SKIP = 125
DEV_ROOT = os.environ.get("IMEX_TEST_DEV_ROOT", "")
PROC_DEVICES = os.environ.get("IMEX_TEST_PROC_DEVICES", "/proc/devices")
FOLDER = os.path.join(DEV_ROOT or "/", "dev", "nvidia-caps-imex-channels")
NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]

# A fresh process: cuInit, then one granule of fabric memory on device 0 (cuMemCreate) and its export.
# Prints {"init": NAME, "granularity": N, "create": NAME, "export": NAME} (NAME a CUresult name).
DIRECT_FABRIC = r"""
import ctypes, json, os
lib = ctypes.CDLL(os.environ.get("CUMEMCTL_LIBCUDA") or "libcuda.so.1")
class Location(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]
class Flags(ctypes.Structure):
    _fields_ = [("compressionType", ctypes.c_ubyte), ("gpuDirectRDMACapable", ctypes.c_ubyte),
                ("usage", ctypes.c_ushort), ("reserved", ctypes.c_ubyte * 4)]
class Prop(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("requestedHandleTypes", ctypes.c_int), ("location", Location),
                ("win32HandleMetaData", ctypes.c_void_p), ("allocFlags", Flags)]
P, U64, SZ = ctypes.POINTER, ctypes.c_ulonglong, ctypes.c_size_t
lib.cuMemGetAllocationGranularity.argtypes = [P(SZ), P(Prop), ctypes.c_int]
lib.cuMemCreate.argtypes = [P(U64), SZ, P(Prop), U64]
lib.cuMemExportToShareableHandle.argtypes = [ctypes.c_void_p, U64, ctypes.c_int, U64]
lib.cuMemRelease.argtypes = [U64]
def name(r):
    s = ctypes.c_char_p()
    lib.cuGetErrorName(r, ctypes.byref(s))
    return s.value.decode() if s.value else "CUresult %d" % r
out = {"init": name(lib.cuInit(0))}
if out["init"] == "CUDA_SUCCESS":
    prop = Prop(type=1, requestedHandleTypes=8, location=Location(1, 0))  # pinned, fabric, device 0
    g, h = SZ(), U64()
    out["granularity"] = g.value if lib.cuMemGetAllocationGranularity(g, prop, 0) == 0 else None
    r = lib.cuMemCreate(h, g.value, prop, 0)
    out["create"] = name(r)
    if r == 0:
        handle = (ctypes.c_ubyte * 64)()
        out["export"] = name(lib.cuMemExportToShareableHandle(handle, h.value, 8, 0))
        lib.cuMemRelease(h.value)
print(json.dumps(out))
"""


class Checker:
    """Collects named comparisons and prints one line each."""

    def __init__(self):
        self.failed = 0
        self.passed = 0

    def eq(self, what, got, want):
        ok = got == want
        self.passed += ok
        self.failed += not ok
        print(f"  {'ok  ' if ok else 'FAIL'}  {what}: {got!r}" + ("" if ok else f", expected {want!r}"))

    def done(self):
        print(f"{self.passed} passed, {self.failed} failed")
        return 1 if self.failed else 0


def direct_fabric(as_nobody=False):
    """The direct probe's answer, or {} where it could not run."""
    cmd = [sys.executable, "-c", DIRECT_FABRIC]
    r = subprocess.run((NOBODY if as_nobody else []) + cmd, capture_output=True, text=True, timeout=120)
    try:
        return json.loads(r.stdout.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        print(f"  direct fabric probe gave no answer: {r.stderr.strip()[-500:]}")
        return {}


def imex(binary, *args, as_nobody=False):
    """Runs imex-setup with --json; returns (exit code, JSON or None), printing a summary."""
    cmd = [binary, "imex-setup", *args, "--json"]
    if DEV_ROOT:
        cmd += ["--dev-root", DEV_ROOT, "--proc-devices", PROC_DEVICES]
    if os.environ.get("IMEX_TEST_PARAMS"):
        cmd += ["--params", os.environ["IMEX_TEST_PARAMS"]]
    if as_nobody:
        cmd = NOBODY + cmd
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    try:
        doc = json.loads(r.stdout)
    except json.JSONDecodeError:
        doc = None
    print(f"$ {'(as nobody) ' if as_nobody else ''}{' '.join(cmd[cmd.index(binary):])}  -> exit {r.returncode}")
    for line in r.stderr.strip().splitlines():
        print(f"    {line}")
    return r.returncode, doc


def has_create(binary):
    """Whether this cumemctl has the create command."""
    return subprocess.run([binary, "create", "--help"], capture_output=True, timeout=60).returncode == 0


def create_fabric(binary):
    """`cumemctl create --size 2MiB --handle-type fabric --export` (a fresh process): (exit code, JSON)."""
    cmd = [binary, "create", "--size", "2MiB", "--handle-type", "fabric", "--export", "--json"]
    env = dict(os.environ, CUMEMCTL_IMEX_CHANNEL_DIR=FOLDER) if DEV_ROOT else None
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    print(f"$ {' '.join(cmd)}  -> exit {r.returncode}")
    for line in r.stderr.strip().splitlines():
        print(f"    {line}")
    try:
        return r.returncode, json.loads(r.stdout)
    except json.JSONDecodeError:
        return r.returncode, None


def node(path):
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    return (stat.S_ISCHR(st.st_mode), os.major(st.st_rdev), os.minor(st.st_rdev), st.st_uid, st.st_gid,
            stat.S_IMODE(st.st_mode))


def imex_major():
    with open(PROC_DEVICES, encoding="ascii") as f:
        char = False
        for line in f:
            if line.strip() == "Character devices:":
                char = True
            elif line.strip().endswith("devices:"):
                char = False
            elif char and line.split()[1:] == ["nvidia-caps-imex-channels"]:
                return int(line.split()[0])
    return None


def verify_error(doc):
    return ((doc or {}).get("results", {}).get("verify") or {}).get("error") or {}


def main(binary):
    if os.geteuid() != 0:
        print("skip: needs root (it makes device nodes)")
        return SKIP
    if not DEV_ROOT and os.environ.get("CUMEMCTL_GPU_ALLOW_MKNOD") != "1":
        print(f"skip: set CUMEMCTL_GPU_ALLOW_MKNOD=1 to allow mknod in {FOLDER}")
        return SKIP
    major = imex_major()
    if major is None:
        print("skip: /proc/devices has no nvidia-caps-imex-channels")
        return SKIP
    probe = direct_fabric()
    if probe.get("init") != "CUDA_SUCCESS":
        print(f"skip: no usable CUDA driver and device ({probe})")
        return SKIP
    c = Checker()
    folder_existed = os.path.isdir(FOLDER)
    before = sorted(os.listdir(FOLDER)) if folder_existed else []
    made = [n for n in (0, 1) if f"channel{n}" not in before]
    print(f"major {major}; {FOLDER} {'has ' + str(before) if folder_existed else 'does not exist'}")
    try:
        if before:
            print("note: channel nodes exist already, so the 'before' step (no channel) is skipped")
        else:
            code, doc = imex(binary, "--dry-run", "--verify")
            d = direct_fabric()
            err = verify_error(doc)
            c.eq("before: --dry-run --verify exit code (permission)", code, 4)
            c.eq("before: verify's driver error is the direct cuMemCreate's", err.get("driver_call", {}).get("name"),
                 d.get("create"))
            c.eq("before: direct fabric cuMemCreate", d.get("create"), "CUDA_ERROR_NOT_PERMITTED")
            c.eq("before: the diagnosis names the IMEX channel", "IMEX channel node" in (err.get("cause") or ""), True)
            after = sorted(os.listdir(FOLDER)) if os.path.isdir(FOLDER) else None
            c.eq("before: --dry-run made nothing", after, before if folder_existed else None)
            if has_create(binary):
                code, doc = create_fabric(binary)
                errs = (doc or {}).get("errors") or [{}]
                c.eq("before: create --handle-type fabric exit code (permission)", code, 4)
                c.eq("before: create's driver error", errs[0].get("driver_call", {}).get("name"), "CUDA_ERROR_NOT_PERMITTED")
                c.eq("before: create's diagnosis names the IMEX channel", "IMEX channel" in (errs[0].get("cause") or ""), True)
        code, doc = imex(binary, "--verify")
        c.eq("setup: exit code", code, 0)
        ch = (doc or {}).get("results", {}).get("channels", [{}])[0]
        c.eq("setup: major from /proc/devices", (doc or {}).get("results", {}).get("major"), major)
        c.eq("setup: channel0 action", ch.get("action"), "unchanged" if "channel0" in before else "created")
        c.eq("setup: verify ok", (doc or {}).get("results", {}).get("verify", {}).get("ok"), True)
        if "channel0" not in before:
            c.eq("setup: channel0 node", node(f"{FOLDER}/channel0"), (True, major, 0, 0, 0, 0o666))
        d = direct_fabric()
        c.eq("after: direct fabric cuMemCreate", d.get("create"), "CUDA_SUCCESS")
        c.eq("after: direct fabric export", d.get("export"), "CUDA_SUCCESS")
        c.eq("after: granularity as the driver says", (doc or {}).get("results", {}).get("verify", {}).get("granularity_bytes"),
             d.get("granularity"))
        if has_create(binary):
            code, _ = create_fabric(binary)
            c.eq("after: create --handle-type fabric --export exit code", code, 0)
        code, doc = imex(binary)
        c.eq("rerun: exit code", code, 0)
        c.eq("rerun: channel0 unchanged", (doc or {}).get("results", {}).get("channels", [{}])[0].get("action"), "unchanged")
        if made == [0, 1]:
            isolation(binary, c, major)
        else:
            print("note: channel0 or channel1 existed before, so the isolation step is skipped")
    finally:
        restore(binary, made, folder_existed)
    return c.done()


def isolation(binary, c, major):
    """Step 5: one channel per user. Ends with channel0 back to the driver's defaults."""
    code, _ = imex(binary, "--mode", "0600")
    c.eq("isolation: channel0 made root's 0600 (exit)", code, 0)
    code, doc = imex(binary, "--mode", "0600", "--check", "--verify", as_nobody=True)
    c.eq("isolation: nobody's --check --verify exit code", code, 4)
    c.eq("isolation: nobody's verify error", verify_error(doc).get("driver_call", {}).get("name"),
         "CUDA_ERROR_NOT_PERMITTED")
    nobody_direct(c, "isolation: direct fabric cuMemCreate as nobody", "CUDA_ERROR_NOT_PERMITTED")
    code, doc = imex(binary, "--channel", "1", "--owner", "nobody", "--verify")
    c.eq("isolation: --channel 1 --owner nobody --verify exit code", code, 0)
    c.eq("isolation: verified as nobody", (doc or {}).get("results", {}).get("verify", {}).get("uid"), 65534)
    c.eq("isolation: channel1 node", node(f"{FOLDER}/channel1"), (True, major, 1, 65534, 65534, 0o600))
    nobody_direct(c, "isolation: direct fabric cuMemCreate as nobody now", "CUDA_SUCCESS")
    # A plain run beside the per-user channels widens neither (man cumemctl-imex-setup, SECURITY).
    code, doc = imex(binary, "--channels", "0-1")
    c.eq("never widened: a plain run's exit code", code, 0)
    c.eq("never widened: a plain run keeps root's 0600 channel0 and nobody's channel1",
         [ch.get("action") for ch in (doc or {}).get("results", {}).get("channels", [])], ["kept", "kept"])
    c.eq("never widened: channel0 node", node(f"{FOLDER}/channel0"), (True, major, 0, 0, 0, 0o600))
    c.eq("never widened: channel1 node", node(f"{FOLDER}/channel1"), (True, major, 1, 65534, 65534, 0o600))
    nobody_direct(c, "never widened: direct fabric cuMemCreate as nobody after the plain run", "CUDA_SUCCESS")
    code, doc = imex(binary, "--force")
    c.eq("isolation: --force gives channel0 the driver's mode again",
         (doc or {}).get("results", {}).get("channels", [{}])[0].get("action"), "fixed")


def nobody_direct(c, what, want):
    """The direct probe as nobody, where nobody can run this Python and load libcuda."""
    d = direct_fabric(as_nobody=True)
    if not d:
        print(f"  note  {what}: skipped (nobody cannot run {sys.executable} with libcuda)")
        return
    c.eq(what, d.get("create"), want)


def restore(binary, made, folder_existed):
    """Step 6: removes the channels this test made, and the folder if it made it."""
    if os.environ.get("KEEP_IMEX_CHANNELS") == "1":
        print("KEEP_IMEX_CHANNELS=1: the channel nodes stay")
        return
    if made:
        imex(binary, "--channels", ",".join(map(str, made)), "--remove")
    if not folder_existed and os.path.isdir(FOLDER) and not os.listdir(FOLDER):
        os.rmdir(FOLDER)
    print(f"restored: {FOLDER} {'has ' + str(sorted(os.listdir(FOLDER))) if os.path.isdir(FOLDER) else 'removed'}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
