#!/usr/bin/env bash
# Re-record the model-check files of aio-poll-replay --model-check:
# qemu-storage-daemon of pristine QEMU 10.2.2 plus base-trace-10.2.2.patch
# (the poll_adjust trace event), built in WORK_DIR, recorded under fio over
# NBD by record.py --model-check, twice: at the default poll parameters and
# at poll-max-ns=50000, poll-grow=3, poll-shrink=2.  See README.md.
#
# usage: harness/replay/record-unpatched.sh [WORK_DIR [OUT_DIR]]
#   WORK_DIR  copy of the tree and its build (default work/10.2.2/base-trace)
#   OUT_DIR   where the .modelcheck files go (default harness/replay/traces)
#
# Needs the pristine tree that './apw build --unpatched all' extracts
# (work/10.2.2/base/src).  The recordings hold /tmp/apw-bench.lock, so
# that they never overlap a benchmark.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${1:-$root/work/10.2.2/base-trace}
out=${2:-$here/traces}
base=$root/work/10.2.2/base/src

[ -f "$base/.apw-ok" ] ||
    { echo "no pristine 10.2.2 in $base: run ./apw build --unpatched all" >&2
      exit 1; }
mkdir -p "$work" "$out"
work=$(cd "$work" && pwd)
out=$(cd "$out" && pwd)
if [ ! -f "$work/src/.apw-trace-ok" ] ||
   ! cmp -s "$here/base-trace-10.2.2.patch" "$work/src/.apw-trace-ok"; then
    rm -rf "$work/src" "$work/build-all"
    cp -a "$base" "$work/src"
    patch -d "$work/src" -p1 -s < "$here/base-trace-10.2.2.patch"
    cp "$here/base-trace-10.2.2.patch" "$work/src/.apw-trace-ok"
fi

# The 'all' profile of harness/build.sh, ccache set up as its ccache_env
export CCACHE_DIR=${CCACHE_DIR:-${APW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/aio-poll-weight}/ccache}
export CCACHE_BASEDIR=$root/work CCACHE_NOHASHDIR=1
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}
export CCACHE_SLOPPINESS=time_macros,include_file_mtime,include_file_ctime
mkdir -p "$work/build-all"
cd "$work/build-all"
if [ ! -f build.ninja ]; then
    echo "configuring in $work/build-all"
    ../src/configure --python=/usr/bin/python3 --without-default-features \
        --enable-linux-aio --enable-linux-io-uring --disable-install-blobs \
        --disable-docs --enable-debug-info \
        --target-list=x86_64-softmmu --enable-tcg --enable-tools \
        --disable-user --without-default-devices \
        --with-devices-x86_64=apw-minimal --enable-fdt=system \
        --cc="ccache gcc" --cxx="ccache g++" --objcc="ccache gcc" \
        > configure.log 2>&1 ||
        { tail -n 20 configure.log >&2; exit 1; }
fi
echo "building qemu-storage-daemon in $work/build-all"
ninja -j"${APW_JOBS:-$(nproc)}" storage-daemon/qemu-storage-daemon \
    > ninja.log 2>&1 || { grep -E 'error' ninja.log | head -n 20 >&2; exit 1; }
qsd=$work/build-all/storage-daemon/qemu-storage-daemon
cd "$root"

record() {
    flock /tmp/apw-bench.lock /usr/bin/python3 "$here/record.py" \
        --model-check --qsd "$qsd" --tmp "$work" --runtime 3 "$@"
}
record --out "$out/unpatched-randread-qd1.modelcheck"
record --rw randwrite --iodepth 8 --poll-max-ns 50000 --poll-grow 3 \
    --poll-shrink 2 \
    --out "$out/unpatched-randwrite-qd8-grow3-shrink2.modelcheck"
