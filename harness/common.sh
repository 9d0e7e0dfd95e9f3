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

# Per-base facts: Debian source version, suite, tarball name and sha256,
# and the folder that holds the series.
base_vars() {
    case "$APW_BASE" in
    10.2.2)
        DEB_VERSION='1:10.2.2+ds-1'
        DEB_SUITE=sid
        ORIG_TARBALL=qemu_10.2.2+ds.orig.tar.xz
        ORIG_SHA256=be05230fe47a6937cd29f28f562932c8125f9c93c2a82c625198f7a4aa601dfb
        ;;
    *)
        die "unknown base '$APW_BASE' (known: 10.2.2)"
        ;;
    esac
    PATCHES=$APW_ROOT/patches
    # Each tree sits beside its build folders, so that both trees compile
    # with the same relative paths and share ccache entries.
    TREE=$APW_WORK/series/src
    BASE_TREE=$APW_WORK/base/src
    ENVFIX=$APW_ROOT/harness/envfix
}

git_team() {
    git -c user.name="$APW_NAME" -c user.email="$APW_EMAIL" \
        -c commit.gpgsign=false "$@"
}
