#!/usr/bin/python3
"""A FUSE file system that says a user mounted it, for the cases of root's trust (needs root and
/dev/fuse):

    fuse_mount.py [--statfs-error] MOUNTPOINT USER_ID FILE -- COMMAND...

mounts at MOUNTPOINT a folder that answers root's name and mode 0755, holding one file named as FILE's
base name, root's, mode 0755, with FILE's bytes: what a user's sshfs or bindfs could show with
allow_other. The mount's user_id is USER_ID, as /proc/self/mountinfo shows for a mount that user made.
Runs COMMAND (through the shell), unmounts and exits with COMMAND's status. Python tests use
`mounted(...)`, a context manager, instead. The kernel's FUSE protocol
(include/uapi/linux/fuse.h), served one request at a time: INIT, LOOKUP, GETATTR, OPEN, READ, STATFS,
RELEASE, FLUSH; anything else is answered ENOSYS. With --statfs-error, STATFS is answered EIO: a
program that will not say what file system it is."""
import contextlib, ctypes, errno, os, signal, struct, subprocess, sys

IN_HEADER = struct.Struct("<IIQQIIIHH")  # len, opcode, unique, nodeid, uid, gid, pid, extlen, pad
OUT_HEADER = struct.Struct("<IiQ")       # len, error, unique
LOOKUP, FORGET, GETATTR, OPEN, READ, STATFS, RELEASE, FLUSH, INIT, BATCH_FORGET = 1, 2, 3, 14, 15, 17, 18, 25, 26, 42
ROOT, FILE = 1, 2


def attr(node, data):
    """fuse_attr: ino, size, blocks, a/m/ctime, their nsecs, mode, nlink, uid, gid, rdev, blksize, flags."""
    mode, size, nlink = (0o040755, 0, 2) if node == ROOT else (0o100755, len(data), 1)
    return struct.pack("<QQQQQQIIIIIIIIII", node, size, (size + 511) // 512, 0, 0, 0, 0, 0, 0,
                       mode, nlink, 0, 0, 0, 4096, 0)


def serve(fd, name, data, statfs_error):
    while True:
        try:
            request = os.read(fd, 1 << 20)
        except OSError as e:
            if e.errno in (errno.EINTR, errno.ENOENT):
                continue
            return  # ENODEV: unmounted
        length, opcode, unique, node, *_ = IN_HEADER.unpack_from(request)
        body = request[IN_HEADER.size:length]
        if opcode in (FORGET, BATCH_FORGET):
            continue  # no answer is expected
        error, out = 0, b""
        if opcode == INIT:
            major, minor = struct.unpack_from("<II", body)
            out = struct.pack("<IIIIHHIIHHI7I", 7, min(minor, 31), 0, 0, 16, 12, 1 << 17, 1, 32, 0, 0, *[0] * 7)
        elif opcode == LOOKUP:
            if node == ROOT and body.rstrip(b"\0") == name:
                out = struct.pack("<QQQQII", FILE, 0, 60, 60, 0, 0) + attr(FILE, data)
            else:
                error = -errno.ENOENT
        elif opcode == GETATTR:
            out = struct.pack("<QII", 60, 0, 0) + attr(node, data)
        elif opcode == OPEN:
            out = struct.pack("<QII", 0, 0, 0)
        elif opcode == READ:
            _, offset, size = struct.unpack_from("<QQI", body)
            out = data[offset:offset + size]
        elif opcode == STATFS and statfs_error:
            error = -errno.EIO
        elif opcode == STATFS:
            out = struct.pack("<QQQQQIIII6I", 0, 0, 0, 0, 0, 4096, 255, 4096, 0, *[0] * 6)
        elif opcode in (RELEASE, FLUSH):
            pass
        else:
            error = -errno.ENOSYS
        os.write(fd, OUT_HEADER.pack(OUT_HEADER.size + len(out), error, unique) + out)


@contextlib.contextmanager
def mounted(mountpoint, user_id, path, statfs_error=False):
    """The file system mounted at MOUNTPOINT while the block runs, served by a child process."""
    with open(path, "rb") as f:
        data = f.read()
    fd = os.open("/dev/fuse", os.O_RDWR)
    libc = ctypes.CDLL(None, use_errno=True)
    options = f"fd={fd},rootmode=40000,user_id={user_id},group_id={user_id},allow_other".encode()
    if libc.mount(b"fakeroot", mountpoint.encode(), b"fuse.fakeroot", 0, options) != 0:
        error = ctypes.get_errno()
        os.close(fd)
        raise OSError(error, f"mount {mountpoint}: {os.strerror(error)}")
    server = os.fork()
    if server == 0:
        serve(fd, os.path.basename(path).encode(), data, statfs_error)
        os._exit(0)
    os.close(fd)
    try:
        yield
    finally:
        libc.umount2(mountpoint.encode(), 2)  # MNT_DETACH
        os.kill(server, signal.SIGKILL)
        os.waitpid(server, 0)


def main():
    args = sys.argv[1:sys.argv.index("--")]
    command = sys.argv[sys.argv.index("--") + 1:]
    statfs_error = "--statfs-error" in args
    mountpoint, user_id, path = [a for a in args if a != "--statfs-error"]
    try:
        with mounted(mountpoint, int(user_id), path, statfs_error):
            status = subprocess.run(" ".join(command), shell=True).returncode
    except OSError as e:
        sys.exit(f"fuse_mount.py: {e}")
    sys.exit(status)


if __name__ == "__main__":
    main()
