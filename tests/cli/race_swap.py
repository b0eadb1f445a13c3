#!/usr/bin/python3
"""Another user's half of a race, test equipment only: while root runs cumemctl on NAME, swaps what NAME
is, as fast as it can, until killed.

    race_swap.py links NAME GOOD EVIL   NAME is a symbolic link to GOOD, then to EVIL, then to GOOD, ...
                                        (each made beside it and renamed over it: never missing)
    race_swap.py appear NAME EVIL       NAME is missing, then a hard link to EVIL, then missing, ...

NAME's folder must let this user add names (a sticky folder such as /tmp); GOOD is root's file that
passes any check, EVIL this user's."""
import os
import sys


def main(argv):
    mode, name = argv[1], argv[2]
    spare = name + ".swap"
    if mode == "links":
        good, evil = argv[3], argv[4]
        while True:
            for target in (good, evil):
                try:
                    os.unlink(spare)
                except FileNotFoundError:
                    pass
                os.symlink(target, spare)
                os.replace(spare, name)
    elif mode == "appear":
        evil = argv[3]
        while True:
            try:
                os.link(evil, name)
            except FileExistsError:
                pass
            os.unlink(name)
    else:
        print(f"race_swap.py: unknown mode {mode}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
