#!/usr/bin/env bash
# Make the series patch that adds tests/bench/aio-poll-replay.c, from the
# staged files, on top of the series tree's HEAD, without touching that
# tree: a --no-checkout clone in a temporary folder takes the commit.
#
# usage: harness/replay/mkpatch.sh [TREE [STAGING [OUTPUT]]]
#   TREE     the series tree (default work/series/src)
#   STAGING  holds tests/bench/aio-poll-replay.c and tests/bench/meson.build
#            (default work/staging)
#   OUTPUT   the patch (default harness/replay/aio-poll-replay.patch)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tree=$(cd "${1:-$root/work/series/src}" && pwd)
staging=$(cd "${2:-$root/work/staging}" && pwd)
out=${3:-$root/harness/replay/aio-poll-replay.patch}
date='Sun, 29 Nov 2026 12:07:00 +0000'

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git clone -q --no-checkout --shared "$tree" "$tmp/q"
cd "$tmp/q"
git read-tree HEAD

add() {     # add PATH, content on stdin
    local blob
    blob=$(git hash-object -w --stdin)
    git update-index --add --cacheinfo "100644,$blob,$1"
}
add tests/bench/aio-poll-replay.c <"$staging/tests/bench/aio-poll-replay.c"
add tests/bench/meson.build <"$staging/tests/bench/meson.build"
git show HEAD:MAINTAINERS |
    sed '/^F: tests\/unit\/test-aio-poll-weight.c$/a F: tests/bench/aio-poll-replay.c' |
    add MAINTAINERS

cat >"$tmp/msg" <<'EOF'
tests/bench: replay aio_poll() traces against an offline oracle

Wall-clock benchmarks of busy polling vary by 15% from run to run, too
much to tell two polling policies apart.  aio-poll-replay measures them
exactly instead: it replays a trace of event times through a model of
aio_poll() with a fake clock (poll for the policy's time; an event that
comes within it is caught, else the poll is wasted and the event needs
a blocking wait), so every figure is an integer that depends on the
trace alone.

It replays each trace through
- this series' policy at any poll-weight, with the functions of
  util/aio-posix.h and, in lockstep, with the real
  aio_adjust_polling_time() on an AioContext with fake handlers; the
  two must agree at every iteration;
- a model of the policy of QEMU 10.2.2 that the series replaced;
- an offline oracle that polls exactly until the next event when it
  comes within poll-max-ns.  The sum of the k smallest delays is the
  least polling that catches k events: the frontier that no policy can
  beat.
and reports, per policy, the events caught by polling, those that
needed a blocking wait, the polling time and the part of it wasted,
polling time per caught event, and the distance from the oracle.

Traces are text, one '<time_ns> <handler_id>' line per event.  Four
synthetic ones are built in (fixed interval, fast and slow handlers,
Poisson arrivals, on/off bursts), generated with splitmix64 and integer
arithmetic only, so that they are the same on every machine.

--check, run with the unit tests, pins the figures of the synthetic
traces: the oracle's and the unpatched model's must not change, and the
series at the default weight must not catch fewer events or poll
longer.

Signed-off-by: aio-poll-weight developers <devel@aio-poll-weight.invalid>
EOF
commit=$(GIT_AUTHOR_NAME='aio-poll-weight developers' \
    GIT_AUTHOR_EMAIL='devel@aio-poll-weight.invalid' \
    GIT_COMMITTER_NAME='aio-poll-weight developers' \
    GIT_COMMITTER_EMAIL='devel@aio-poll-weight.invalid' \
    GIT_AUTHOR_DATE=$date GIT_COMMITTER_DATE=$date \
    git commit-tree "$(git write-tree)" -p HEAD -F "$tmp/msg")
n=$(( $(git rev-list --count base..HEAD) + 1 ))
git -c core.abbrev=12 -c diff.noprefix=false format-patch -q --stdout \
    --zero-commit --no-signature --start-number "$n" -N \
    --subject-prefix="PATCH $n/$n" -1 "$commit" >"$out"
echo "wrote $out (patch $n on top of $(git log -1 --format=%s HEAD))"
