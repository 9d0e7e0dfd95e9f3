# Shared settings and helpers for the aio-poll-weight harness.
# Sourced by ./apw; not meant to be run on its own.

APW_ROOT=${APW_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
APW_BASE=${APW_BASE:-10.2.2}
APW_WORK=${APW_WORK:-$APW_ROOT/work}
APW_CACHE=${APW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/aio-poll-weight}
APW_JOBS=${APW_JOBS:-$(nproc)}

# Team identity for the commits of the generated tree.
APW_NAME='aio-poll-weight developers'
APW_EMAIL='devel@aio-poll-weight.invalid'

die() { printf 'apw: error: %s\n' "$*" >&2; exit 1; }
say() { printf '== %s\n' "$*"; }
# cg_field LINE KEY: the value of KEY=value in a harness program's summary
# line (aio_poll_cost, aio_loop_bench)
cg_field() {
    printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# The bases the series is kept for; the first is the default.
APW_BASES='10.2.2 10.0.13'

# The version of the series on the list: v1 went out as plain [PATCH].
APW_SERIES_VERSION=v2

# Patches 1-8 are QEMU 11.1's policy ("series" in the replay, the evidence
# and callgrind); the patches after them are the project's own policy
# ("new": patch 9, the cost-minimising policy, and patch 10, its count of
# slept waits without the wakeup latency).
APW_UPSTREAM_PATCHES=8

# Per-base facts: Debian source version, suite, tarball name and the sha256
# of the source package's files (orig tarball, .dsc, debian tarball),
# and the folders of the base: its series (patches/BASE), its
# build-environment fixes (harness/envfix/BASE) and its work folder
# (work/BASE: trees, builds, logs, benchmark output).
base_vars() {
    case "$APW_BASE" in
    10.2.2)
        TEST_SKIPS=
        DEB_VERSION='1:10.2.2+ds-1'
        DEB_SUITE=sid
        ORIG_TARBALL=qemu_10.2.2+ds.orig.tar.xz
        ORIG_SHA256=be05230fe47a6937cd29f28f562932c8125f9c93c2a82c625198f7a4aa601dfb
        DSC_SHA256=f1684b3aa5ec500c3389d346c6501dee45041ea91656c6556d4da9023b7987dd
        DEB_TARBALL_SHA256=ddf75aceab4f8f77374f3cb34fc97b41514895aeb293ce8b2ddd5e072bb0f5c0
        ;;
    10.0.13)
        # The MCS lock of test-aio-multithread's own code returns from
        # qemu_futex_wait() without checking the value, so a spurious
        # wakeup lets two threads in and the counter check fails now and
        # then (seen once in about 20 runs here).  Later QEMU rechecks
        # the value in a loop (10.2.2 does); 10.0.13 does not.
        # Nothing of the event loop is involved.  TEST:PATH skips PATH.
        TEST_SKIPS='test-aio-multithread:/aio/multi/mutex/mcs'
        DEB_VERSION='1:10.0.13+ds-0+deb13u1'
        DEB_SUITE=trixie
        ORIG_TARBALL=qemu_10.0.13+ds.orig.tar.xz
        ORIG_SHA256=6a0888e806c2ffc0c5f0733e974f9aea55491950d3c47c98669c8b236dde59ae
        DSC_SHA256=a426c892e5369058c3423816c8625bc8010bb5a58ece57261f62b64ee4d765ad
        DEB_TARBALL_SHA256=da73c092f5684c551b0334d675eb16a3dec91e1edea94759cfb1102fa4a0364e
        ;;
    *)
        die "unknown base '$APW_BASE' (known: $APW_BASES, or all)"
        ;;
    esac
    # Debian's packaging of the base: its .dsc and debian tarball (the
    # version without its epoch names them).
    DEB_DSC=qemu_${DEB_VERSION#*:}.dsc
    DEB_TARBALL=qemu_${DEB_VERSION#*:}.debian.tar.xz
    PATCHES=$APW_ROOT/patches/$APW_BASE
    BW=$APW_WORK/$APW_BASE
    # Each tree sits beside its build folders, so that both trees compile
    # with the same relative paths and share ccache entries.
    TREE=$BW/series/src
    BASE_TREE=$BW/base/src
    ENVFIX=$APW_ROOT/harness/envfix
}

git_team() {
    git -c user.name="$APW_NAME" -c user.email="$APW_EMAIL" \
        -c commit.gpgsign=false "$@"
}

# ./apw --base all COMMAND: the command once per base, in its own process.
# For test, the closing line sums the bases' own closing lines.
for_all_bases() {
    local cmd=$1 b rc=0 pass=0 fail=0 line log
    shift
    for b in $APW_BASES; do
        say "base $b: ./apw --base $b $cmd $*"
        if [ "$cmd" = test ]; then
            log=$(mktemp)
            APW_ALL_BASES=1 APW_BASE=$b "$APW_ROOT/apw" "$cmd" "$@" | tee "$log" || rc=1
            line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1)
            rm -f "$log"
            if [ -z "$line" ]; then
                echo "base $b: no closing line; counted as one failure"
                fail=$((fail + 1))
                continue
            fi
            pass=$((pass + ${line%% passed*}))
            line=${line#*, }
            fail=$((fail + ${line%% failed}))
        else
            APW_BASE=$b "$APW_ROOT/apw" "$cmd" "$@" || rc=1
        fi
    done
    if [ "$cmd" = test ]; then
        echo "all bases ($APW_BASES): $pass passed, $fail failed" >&2
        echo "$pass passed, $fail failed"
        [ "$fail" = 0 ] && [ $rc = 0 ]
    else
        return $rc
    fi
}
