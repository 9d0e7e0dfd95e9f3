#!/bin/sh
# Empty stand-ins for the edk2 firmware images that pc-bios/meson.build
# unpacks when bzip2 is installed and that Debian's +ds tarballs lack.
# Run in the root of a generated QEMU tree by a base's apply.sh; the files
# are untracked and listed in .git/info/exclude.
set -e
for f in aarch64-code arm-code arm-vars riscv-code riscv-vars i386-code \
         i386-secure-code i386-vars x86_64-code x86_64-secure-code \
         loongarch64-code loongarch64-vars; do
    bzip2 -c < /dev/null > pc-bios/edk2-$f.fd.bz2
    [ ! -d .git ] || echo "/pc-bios/edk2-$f.fd.bz2" >> .git/info/exclude
done
