"""GPU tier: `cumemctl le-bind` tells the truth about logical endpoints on this driver.

The reference is the driver itself: its version (cuda.bindings) and what cuGetProcAddress_v2 answers for
the logical endpoint entry points asked at CUDA version 13030, called straight through ctypes on
libcuda.so.1. On a driver older than 13.3, le-bind and le-bind --limits-only must exit 3 with "this driver
(X.Y) has no logical endpoints; they need 13.3" in the table and the JSON, and report the lookup result the
driver gave. On a 13.3 driver only --limits-only runs (it makes nothing) and its limits are compared with
cuLogicalEndpointGetLimits. Never creates an endpoint, never multicast. `devices` must say null (unknown)
for the four logical endpoint attributes exactly where the driver refuses them.
"""
import ctypes
import subprocess
import sys

import direct

LE_VERSION = 13030
LE_ATTRS = {"le_unicast": 153, "le_multicast": 154, "le_counted_ops": 155, "le_unicast_owner_access": 156}
STATUS_UNSET = 3  # what cumemctl passes in; the driver's own values are 0 to 2
STATUS_NAMES = {0: "CU_GET_PROC_ADDRESS_SUCCESS", 1: "CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND",
                2: "CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT", STATUS_UNSET: "unset"}


class Driver:
    """libcuda.so.1 through ctypes: the calls cuda.bindings of an older toolkit cannot make."""

    def __init__(self):
        self.lib = ctypes.CDLL("libcuda.so.1")
        self.lib.cuGetProcAddress_v2.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int,
                                                 ctypes.c_uint64, ctypes.POINTER(ctypes.c_int)]
        self.lib.cuGetErrorName.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        self.lib.cuDeviceGetAttribute.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_int, ctypes.c_int]

    def error_name(self, code):
        name = ctypes.c_char_p()
        if code == 0:
            return "CUDA_SUCCESS"
        if self.lib.cuGetErrorName(code, ctypes.byref(name)) != 0 or not name.value:
            return f"CUresult {code}"
        return name.value.decode()

    def lookup(self, symbol, version):
        """(result name, status name, function pointer or None), as cumemctl asks it."""
        fn = ctypes.c_void_p()
        status = ctypes.c_int(STATUS_UNSET)
        r = self.lib.cuGetProcAddress_v2(symbol.encode(), ctypes.byref(fn), version, 0, ctypes.byref(status))
        return self.error_name(r), STATUS_NAMES.get(status.value, str(status.value)), fn.value

    def attribute(self, ordinal, number):
        value = ctypes.c_int()
        r = self.lib.cuDeviceGetAttribute(ctypes.byref(value), number, ordinal)
        return value.value if r == 0 else None

    def limits(self, fn, ordinal, size):
        """cuLogicalEndpointGetLimits for a unicast endpoint owned by `ordinal` (a 13.3 driver only)."""
        prop = (ctypes.c_uint8 * 24)()
        ctypes.c_int.from_buffer(prop, 0).value = 1          # CU_LOGICAL_ENDPOINT_TYPE_UNICAST
        ctypes.c_int.from_buffer(prop, 4).value = ordinal    # unicast.device
        ctypes.c_uint64.from_buffer(prop, 8).value = size    # size
        align, max_size = ctypes.c_uint64(), ctypes.c_uint64()
        proto = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint64),
                                 ctypes.c_void_p)
        r = proto(fn)(ctypes.byref(align), ctypes.byref(max_size), ctypes.addressof(prop))
        return self.error_name(r), align.value, max_size.value


def run_table(binary, *args):
    r = subprocess.run([binary, *args], capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout, r.stderr


def check_lookup(c, what, doc, result, status):
    lookup = doc["results"]["logical_endpoints"]["lookup"]
    c.eq(f"{what}: lookup entry point", lookup["entry_point"], "cuLogicalEndpointIdReserve")
    c.eq(f"{what}: lookup version", lookup["version"], LE_VERSION)
    c.eq(f"{what}: lookup result", lookup["result"], result)
    c.eq(f"{what}: lookup status", lookup["status"], status)


def check_no_endpoints(c, binary, version_string, result, status):
    message = f"this driver ({version_string}) has no logical endpoints; they need 13.3"
    for extra in ([], ["--limits-only"]):
        what = "le-bind" + (" --limits-only" if extra else "")
        code, doc, err = direct.cumemctl(binary, "le-bind", "--device", "0", "--size", "2MiB", *extra)
        c.eq(f"{what}: exit code", code, 3)
        if doc is None:
            print(err)
            continue
        c.eq(f"{what}: available", doc["results"]["logical_endpoints"]["available"], False)
        c.eq(f"{what}: message", doc["results"]["logical_endpoints"]["message"], message)
        c.eq(f"{what}: error", [e["message"] for e in doc["errors"]], [message])
        c.eq(f"{what}: nothing done", doc["results"]["steps"], [])
        check_lookup(c, what, doc, result, status)
        code, out, err = run_table(binary, "le-bind", "--device", "0", "--size", "2MiB", *extra)
        c.eq(f"{what} (table): exit code", code, 3)
        c.true(f"{what} (table): message in the table", message in out, out)
        c.true(f"{what} (table): driver's lookup result in the table", result in out, out)
        c.true(f"{what} (table): message on stderr", f"cumemctl: error: {message}" in err, err)


def check_limits(c, binary, drv, fn):
    """A 13.3 driver: --limits-only must agree with cuLogicalEndpointGetLimits (or with attribute 153)."""
    size = 2 << 20
    supported = drv.attribute(0, 153)
    code, doc, err = direct.cumemctl(binary, "le-bind", "--device", "0", "--size", "2MiB", "--limits-only")
    if supported == 0:
        c.eq("le-bind --limits-only on a device without unicast endpoints: exit code", code, 3)
        return
    result, align, max_size = drv.limits(fn, 0, size)
    if result != "CUDA_SUCCESS":
        c.true("le-bind --limits-only fails where the driver does", code != 0, f"driver said {result}")
        return
    c.eq("le-bind --limits-only: exit code", code, 0)
    if doc is not None:
        c.eq("bind alignment", doc["results"]["limits"]["bind_alignment_bytes"], align)
        c.eq("max size", doc["results"]["limits"]["max_size_bytes"], max_size)


def main(binary):
    count = direct.init_or_skip()
    c = direct.Checker()
    drv = Driver()
    err, version = direct.cu.cuDriverGetVersion()
    version_string = f"{version // 1000}.{version % 1000 // 10}"
    result, status, fn = drv.lookup("cuLogicalEndpointIdReserve", LE_VERSION)
    print(f"driver {version_string}: cuGetProcAddress_v2(cuLogicalEndpointIdReserve, {LE_VERSION}) -> {result}, "
          f"{status}, {'a pointer' if fn else 'no pointer'}")
    if fn is None:
        check_no_endpoints(c, binary, version_string, result, status)
    else:
        code, doc, err = direct.cumemctl(binary, "le-bind", "--device", "0", "--size", "2MiB", "--limits-only")
        if doc is not None:
            c.eq("available", doc["results"]["logical_endpoints"]["available"], True)
            check_lookup(c, "le-bind --limits-only", doc, result, status)
        _, _, limits_fn = drv.lookup("cuLogicalEndpointGetLimits", LE_VERSION)
        check_limits(c, binary, drv, limits_fn)
    code, doc, err = direct.cumemctl(binary, "devices", "--no-free")
    c.eq("devices: exit code", code, 0)
    for d in (doc or {"results": {"devices": []}})["results"]["devices"][:count]:
        for key, number in LE_ATTRS.items():
            v = drv.attribute(d["ordinal"], number)
            c.eq(f"devices gpu{d['ordinal']} {key}", d["capabilities"][key], None if v is None else bool(v))
    c.done()


if __name__ == "__main__":
    main(sys.argv[1])
