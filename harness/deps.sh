# Install what the build, the tests and the benchmark need: Debian packages
# only, meson and pycotap from bookworm-backports.  Idempotent and quiet on
# a rerun.  Sourced by ./apw.

DEPS_BUILD="git xz-utils ninja-build pkg-config build-essential python3-venv
    libglib2.0-dev device-tree-compiler libaio-dev liburing-dev libfdt-dev
    lib32gcc-12-dev ccache"
DEPS_TEST="fio socat cpio strace valgrind python3-matplotlib busybox-static
    libasan8 libubsan1 libtsan2 e2fsprogs clang python3-sphinx
    python3-sphinx-rtd-theme quilt dpkg-dev mmdebstrap"
DEPS_BACKPORTS="meson python3-pycotap"

BACKPORTS_LIST=/etc/apt/sources.list.d/aio-poll-weight-backports.list

deps_missing() {
    local p missing=
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
            grep -q 'install ok installed' || missing="$missing $p"
    done
    echo $missing
}

meson_ok() {
    local v
    v=$(meson --version 2>/dev/null) || return 1
    dpkg --compare-versions "$v" ge 1.5
}

cmd_deps() {
    local need bp
    [ "$(uname -s)" = Linux ] || die "a Linux host is needed"
    need=$(deps_missing $DEPS_BUILD $DEPS_TEST)
    bp=$(deps_missing $DEPS_BACKPORTS)
    if [ -z "$need" ] && [ -z "$bp" ] && meson_ok; then
        return 0
    fi
    [ "$(id -u)" = 0 ] || die "missing packages ($need $bp): run as root, or install them first"
    if [ ! -f "$BACKPORTS_LIST" ]; then
        echo 'deb http://deb.debian.org/debian bookworm-backports main' > "$BACKPORTS_LIST"
    fi
    say "installing Debian packages:$need $bp"
    export DEBIAN_FRONTEND=noninteractive
    apt-get -qq update >/dev/null || die "apt-get update failed"
    if [ -n "$need" ]; then
        apt-get -qq install -y --no-install-recommends $need >/dev/null ||
            die "apt-get install failed for:$need"
    fi
    apt-get -qq install -y --no-install-recommends -t bookworm-backports \
        $DEPS_BACKPORTS >/dev/null ||
        die "could not install $DEPS_BACKPORTS from bookworm-backports"
    meson_ok || die "meson >= 1.5 is needed; found $(meson --version 2>/dev/null)"
}
