#!/usr/bin/python3
"""Writes a variant of a fake driver profile: a base profile with some values changed, so that a test
case states only what differs (a query that never completes, fabric software that is not ready).

    make_profile.py BASE OUT PATH=VALUE...

BASE is a profile name (gb200x4) or a file; PATH is dotted, with [N] for a list index or [*] for every
element; VALUE is JSON (a bare word that is not JSON is taken as a string). A device attribute is
changed by its name, without CU_DEVICE_ATTRIBUTE_ (the fake driver knows the names that cases change:
kAttributeNames in fake_state.cpp; a name overrides the base profile's number). Examples:

    devices[*].logical_endpoints.query_polls=-1
    devices[0].logical_endpoints.create_error=CUDA_ERROR_SYSTEM_NOT_READY
    devices[1].attrs.LOGICAL_ENDPOINT_MULTICAST_SUPPORTED=0
    missing_entry_points=["cuLogicalEndpointBindAddr"]

BASE may itself be an override file ("base" and the fields it changes, docs/testing.md): it is read
whole (load_profile), and OUT is a whole profile.
"""
import json
import os
import re
import sys


# How deep "base" may chain (a profile whose base has a base...): a loop of bases ends here.
MAX_BASES = 8


def override(target, patch, where="profile"):
    """`target` with `patch` applied by the profiles' override rule (docs/testing.md): a JSON merge patch
    (RFC 7386: an object merges member by member, null removes a member, anything else replaces), except
    that an object applied to a list patches its elements: "*" every element, then "N" element N."""
    if not isinstance(patch, dict):
        return patch
    if isinstance(target, list):
        out = list(target)
        for key in sorted(patch, key=lambda k: k != "*"):
            value = patch[key]
            if value is None or (key != "*" and not (re.fullmatch(r"0|[1-9][0-9]*", key) and int(key) < len(out))):
                raise SystemExit(f"make_profile: {where}: {key!r} is not \"*\" or the index of one of its "
                                 f"{len(out)} elements with a value that is not null")
            for i in range(len(out)) if key == "*" else [int(key)]:
                out[i] = override(out[i], value, f"{where}[{i}]")
        return out
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = override(out.get(key), value, f"{where}.{key}")
    return out


def load_profile(path, depth=0):
    """The profile in the file `path`, its "base" (a file beside it) read first and overridden by the rest."""
    with open(path, encoding="utf-8") as f:
        profile = json.load(f)
    if not isinstance(profile, dict) or "base" not in profile:
        return profile
    if depth >= MAX_BASES:
        raise SystemExit(f"make_profile: {path}: more than {MAX_BASES} bases, one on another")
    patch = dict(profile)
    base = patch.pop("base")
    return override(load_profile(os.path.join(os.path.dirname(path), base), depth + 1), patch)


def steps(path):
    """'a.b[1][*].c' -> ['a', 'b', 1, '*', 'c']"""
    out = []
    for part in path.split("."):
        m = re.fullmatch(r"([^\[\]]*)((?:\[(?:\d+|\*)\])*)", part)
        if not m:
            raise SystemExit(f"make_profile: bad path component {part!r}")
        if m.group(1):
            out.append(m.group(1))
        out += [int(i) if i != "*" else "*" for i in re.findall(r"\[(\d+|\*)\]", m.group(2))]
    return out


def assign(node, keys, value):
    key, rest = keys[0], keys[1:]
    targets = range(len(node)) if key == "*" else [key]
    for k in targets:
        if not rest:
            node[k] = value
            continue
        if isinstance(node, dict) and k not in node:
            node[k] = {}
        assign(node[k], rest, value)


def main(argv):
    if len(argv) < 3:
        raise SystemExit(__doc__)
    base, out, changes = argv[0], argv[1], argv[2:]
    if not os.path.exists(base):
        base = os.path.join(os.path.dirname(os.path.abspath(__file__)), "profiles", base + ".json")
    profile = load_profile(base)
    for change in changes:
        path, sep, text = change.partition("=")
        if not sep:
            raise SystemExit(f"make_profile: expected PATH=VALUE, got {change!r}")
        keys = steps(path)
        numbered = [k for i, k in enumerate(keys[1:]) if keys[i] == "attrs" and isinstance(k, str) and k.isdigit()]
        if numbered:
            raise SystemExit(f"make_profile: {change!r} changes device attribute {numbered[0]} by its number; change "
                             f"it by its name, without CU_DEVICE_ATTRIBUTE_ (attrs.COMPUTE_MODE=3 for attribute 20), "
                             f"adding the name to kAttributeNames in tests/fakecuda/fake_state.cpp where it is not there")
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            value = text
        assign(profile, keys, value)
    with open(out, "w", encoding="utf-8") as f:
        json.dump(profile, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1:])
