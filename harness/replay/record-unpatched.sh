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
# The pristine tree is the one of './apw build --unpatched' (extracted here
# if missing); the build uses the harness's 'all' profile and ccache.  The
# recordings hold /tmp/apw-bench.lock, so that they never overlap a
# benchmark.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$root/harness/common.sh"
. "$root/harness/fetch.sh"
. "$root/harness/tree.sh"
. "$root/harness/build.sh"
APW_BASE=10.2.2
base_vars
work=${1:-$BW/base-trace}
out=${2:-$here/traces}

base_tree
mkdir -p "$work" "$out"
work=$(cd "$work" && pwd)
out=$(cd "$out" && pwd)
if [ ! -f "$work/src/.apw-trace-ok" ] ||
   ! cmp -s "$here/base-trace-10.2.2.patch" "$work/src/.apw-trace-ok"; then
    rm -rf "$work/src" "$work/build-all"
    cp -a "$BASE_TREE" "$work/src"
    patch -d "$work/src" -p1 -s < "$here/base-trace-10.2.2.patch"
    cp "$here/base-trace-10.2.2.patch" "$work/src/.apw-trace-ok"
fi
build_profile "$work/src" "$work/build-all" all storage-daemon/qemu-storage-daemon
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
