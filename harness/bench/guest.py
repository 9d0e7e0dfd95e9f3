#!/usr/bin/python3
"""Build the benchmark guest's initramfs: busybox, the virtio and fw_cfg
modules of Debian's kernel (dependencies first), Debian's fio with the
shared libraries that ldd lists, and harness/bench/init.sh as /init.

Usage: guest.py --kernel-root DIR --busybox FILE --out INITRAMFS
                [--fio FILE] [--vmlinux-out FILE]

DIR is a linux-image-*.deb extracted with dpkg-deb -x.  The archive is an
uncompressed newc cpio, written here (no cpio binary needed): the guest
unpacks it faster than it would decompress it under TCG.
"""

import argparse
import glob
import gzip
import lzma
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# What the guest loads; their dependencies are added in load order.
MODULES = ["virtio_pci", "virtio_blk", "qemu_fw_cfg"]


def die(msg):
    sys.exit("guest.py: error: " + msg)


def find_modules(kroot):
    """Map module name (with '_') to its .ko file under kroot."""
    found = {}
    dirs = [d for d in os.listdir(os.path.join(kroot, "lib/modules"))]
    if len(dirs) != 1:
        die("expected one kernel under %s/lib/modules, found %s" % (kroot, dirs))
    base = os.path.join(kroot, "lib/modules", dirs[0])
    for top, _, files in os.walk(base):
        for f in files:
            m = re.match(r"(.*)\.ko(\.xz)?$", f)
            if m:
                found[m.group(1).replace("-", "_")] = os.path.join(top, f)
    return found


def ko_bytes(path):
    with open(path, "rb") as f:
        data = f.read()
    return lzma.decompress(data) if path.endswith(".xz") else data


def ko_depends(data):
    m = re.search(rb"(?:^|\0)depends=([A-Za-z0-9_,-]*)\0", data)
    if not m or not m.group(1):
        return []
    return [d.replace("-", "_") for d in m.group(1).decode().split(",") if d]


def module_order(mods, wanted):
    order, seen = [], set()

    def visit(name, stack):
        if name in seen:
            return
        if name in stack:
            die("module dependency loop at " + name)
        if name not in mods:
            die("module %s not found in the kernel package" % name)
        for dep in ko_depends(ko_bytes(mods[name])):
            visit(dep, stack + [name])
        seen.add(name)
        order.append(name)

    for w in wanted:
        visit(w, [])
    return order


def ldd_libs(binary):
    out = subprocess.run(["ldd", binary], check=True, capture_output=True,
                         text=True).stdout
    libs = []
    for line in out.splitlines():
        line = line.strip()
        m = re.match(r"\S+ => (/\S+)", line) or re.match(r"(/\S+) \(", line)
        if m:
            libs.append(m.group(1))
        elif "not found" in line:
            die("ldd %s: %s" % (binary, line))
    return libs


def usr_path(path):
    """Merged-/usr: /lib/x -> usr/lib/x, /lib64/x -> usr/lib64/x."""
    p = path.lstrip("/")
    for d in ("lib/", "lib64/"):
        if p.startswith(d):
            return "usr/" + p
    return p


def put(root, rel, src=None, data=None, mode=0o755):
    dst = os.path.join(root, rel)
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    if src is not None:
        shutil.copyfile(src, dst)
    else:
        with open(dst, "wb") as f:
            f.write(data)
    os.chmod(dst, mode)


def write_newc(root, out):
    """Write the tree under root as an uncompressed newc cpio archive."""
    entries = []
    for top, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(dirs + files):
            entries.append(os.path.join(top, name))
    ino = 1
    with open(out, "wb") as f:
        def emit(name, st_mode, data, nlink):
            nonlocal ino
            nb = name.encode() + b"\0"
            hdr = "070701" + "".join("%08X" % v for v in (
                ino, st_mode, 0, 0, nlink, 0, len(data), 0, 0, 0, 0,
                len(nb), 0))
            ino += 1
            f.write(hdr.encode() + nb)
            f.write(b"\0" * ((4 - (110 + len(nb)) % 4) % 4))
            f.write(data)
            f.write(b"\0" * ((4 - len(data) % 4) % 4))

        for path in entries:
            rel = os.path.relpath(path, root)
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                emit(rel, stat.S_IFLNK | 0o777, os.readlink(path).encode(), 1)
            elif stat.S_ISDIR(st.st_mode):
                emit(rel, stat.S_IFDIR | 0o755, b"", 2)
            else:
                with open(path, "rb") as src:
                    emit(rel, stat.S_IFREG | (st.st_mode & 0o777), src.read(), 1)
        emit("TRAILER!!!", 0, b"", 1)


def extract_vmlinux(bzimage):
    """The ELF kernel inside a bzImage (xz or gzip payload), or None.
    QEMU boots an ELF kernel with a PVH note directly (pvh.bin), which
    saves the guest about 5 s of decompressing itself under TCG."""
    with open(bzimage, "rb") as f:
        data = f.read()
    for magic, unpack in ((b"\xfd7zXZ\x00", lambda b: lzma.LZMADecompressor().decompress(b)),
                          (b"\x1f\x8b\x08", lambda b: gzip.GzipFile(fileobj=__import__("io").BytesIO(b)).read())):
        off = data.find(magic)
        while off >= 0:
            try:
                out = unpack(data[off:])
            except (lzma.LZMAError, OSError, EOFError):
                out = b""
            if out[:4] == b"\x7fELF" and b"Xen\x00" in out:   # has the PVH note
                return out
            off = data.find(magic, off + 1)
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kernel-root", required=True)
    ap.add_argument("--busybox", required=True)
    ap.add_argument("--fio", default="/usr/bin/fio")
    ap.add_argument("--out", required=True)
    ap.add_argument("--vmlinux-out",
                    help="also write the uncompressed ELF kernel here, if the "
                    "bzImage holds one (removed otherwise)")
    a = ap.parse_args()

    if a.vmlinux_out:
        bz = sorted(glob.glob(os.path.join(a.kernel_root, "boot/vmlinuz-*")))
        elf = extract_vmlinux(bz[0]) if bz else None
        if elf:
            with open(a.vmlinux_out + ".tmp", "wb") as f:
                f.write(elf)
            os.replace(a.vmlinux_out + ".tmp", a.vmlinux_out)
            print("vmlinux %s: %d MB (PVH boot)" % (a.vmlinux_out, len(elf) >> 20))
        elif os.path.exists(a.vmlinux_out):
            os.unlink(a.vmlinux_out)

    mods = find_modules(a.kernel_root)
    order = module_order(mods, MODULES)
    with tempfile.TemporaryDirectory(dir=os.path.dirname(os.path.abspath(a.out))) as root:
        for d in ("bin", "sbin", "usr/bin", "usr/lib", "usr/lib64", "proc",
                  "sys", "dev", "tmp", "apw/mod"):
            os.makedirs(os.path.join(root, d), exist_ok=True)
        os.symlink("usr/lib", os.path.join(root, "lib"))
        os.symlink("usr/lib64", os.path.join(root, "lib64"))
        put(root, "bin/busybox", src=a.busybox)
        os.symlink("busybox", os.path.join(root, "bin/sh"))
        put(root, "init", src=os.path.join(HERE, "init.sh"))
        put(root, "bin/apwmark", src=os.path.join(HERE, "apwmark"))
        put(root, "usr/bin/fio", src=a.fio)
        for lib in ldd_libs(a.fio):
            # Keep the mode: the kernel wants ld.so executable.
            real = os.path.realpath(lib)
            put(root, usr_path(lib), src=real, mode=os.stat(real).st_mode & 0o777)
        for m in order:
            put(root, "apw/mod/%s.ko" % m, data=ko_bytes(mods[m]), mode=0o644)
        put(root, "apw/modules", data=("\n".join(order) + "\n").encode(),
            mode=0o644)
        tmp = a.out + ".tmp"
        write_newc(root, tmp)
        os.replace(tmp, a.out)
    print("initramfs %s: %d MB, modules %s" % (
        a.out, os.path.getsize(a.out) >> 20, " ".join(order)))


if __name__ == "__main__":
    main()
