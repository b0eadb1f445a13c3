"""Direct driver queries for the GPU tier, through NVIDIA's cuda.bindings: the reference that cumemctl's
answers are compared with. Nothing here goes through cumemctl's own code."""
import ctypes
import json
import os
import subprocess
import sys

try:
    from cuda.bindings import driver as cu
except ImportError:  # pragma: no cover - the GPU machine has it
    cu = None

SKIP = 125


def ok(result):
    err = result[0] if isinstance(result, tuple) else result
    return err == cu.CUresult.CUDA_SUCCESS


def init_or_skip():
    """Initialises the driver; exits 125 (skipped) where there is no driver, binding or device."""
    if cu is None:
        print("skip: cuda.bindings is not installed")
        sys.exit(SKIP)
    try:
        (err,) = cu.cuInit(0)
    except Exception as e:  # no libcuda
        print(f"skip: no CUDA driver ({e})")
        sys.exit(SKIP)
    if err != cu.CUresult.CUDA_SUCCESS:
        print(f"skip: cuInit: {err}")
        sys.exit(SKIP)
    err, count = cu.cuDeviceGetCount()
    if count == 0:
        print("skip: no CUDA device")
        sys.exit(SKIP)
    return count


def attribute(ordinal, number):
    """The attribute's value, or None where the driver refuses it. An attribute newer than the bindings'
    enum (CUDA 13.4's 149, 157, 161 in cuda-bindings for 13.0) is asked through libcuda itself."""
    try:
        which = cu.CUdevice_attribute(number)
    except ValueError:
        lib = ctypes.CDLL("libcuda.so.1")
        value = ctypes.c_int(0)
        err = lib.cuDeviceGetAttribute(ctypes.byref(value), ctypes.c_int(number), ctypes.c_int(ordinal))
        return value.value if err == 0 else None
    err, value = cu.cuDeviceGetAttribute(which, ordinal)
    return value if err == cu.CUresult.CUDA_SUCCESS else None


SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "schema", "report.schema.json")
_validator = []
schema_failures = []


def check_schema(doc, what):
    """Every report must validate against schema/report.schema.json, as the CLI cases' do on the fake:
    the real driver and NVML give values the fake does not. A report that does not is a failure of the
    test that ran it (Checker.done counts it). Without python3-jsonschema, says so once and checks none."""
    if doc is None:
        return
    if not _validator:
        try:
            import jsonschema
            with open(SCHEMA, encoding="utf-8") as f:
                _validator.append(jsonschema.Draft202012Validator(json.load(f)))
        except ImportError:
            print("  note: python3-jsonschema is not installed: the reports are not checked against the schema")
            _validator.append(None)
    if _validator[0] is None:
        return
    for e in sorted(_validator[0].iter_errors(doc), key=lambda e: list(e.absolute_path))[:3]:
        schema_failures.append(f"{what}: {'/'.join(map(str, e.absolute_path))}: {e.message[:300]}")


def cumemctl(binary, *args):
    """Runs cumemctl with --json; returns (exit code, parsed JSON), the JSON checked against the schema."""
    r = subprocess.run([binary, *args, "--json"], capture_output=True, text=True, timeout=300)
    try:
        doc = json.loads(r.stdout)
    except json.JSONDecodeError:
        doc = None
    check_schema(doc, "cumemctl " + " ".join(args))
    return r.returncode, doc, r.stderr


class Checker:
    """Collects named comparisons and prints one line each."""

    def __init__(self):
        self.failed = 0
        self.passed = 0

    def eq(self, what, got, want):
        if got == want:
            self.passed += 1
            print(f"  ok    {what}: {got!r}")
        else:
            self.failed += 1
            print(f"  FAIL  {what}: cumemctl {got!r}, driver {want!r}")

    def true(self, what, cond, detail=""):
        self.eq(what, bool(cond), True) if cond else self._fail(what, detail)

    def _fail(self, what, detail):
        self.failed += 1
        print(f"  FAIL  {what} {detail}")

    def done(self):
        for f in schema_failures:
            self._fail("schema:", f)
        print(f"{self.passed} passed, {self.failed} failed")
        sys.exit(1 if self.failed else 0)
