# Upstream QEMU 11.1, the release that merged poll-weight, from Debian
# trixie-backports: ./apw upstream.  Sourced by ./apw.
#
# Debian serves the binaries but not this source, so the harness makes a
# trixie root with mmdebstrap (trixie + trixie-backports, backports
# preferred, qemu-system-x86 and qemu-utils pinned) in the cache, checks
# that its QEMU packages are the pinned version and that their files are
# unchanged (the packages' md5sums), and runs the binaries through that
# root's dynamic loader and libraries.  Nothing outside the cache changes
# (mmdebstrap itself is installed once, as a Debian package).

# QEMU 11.1.3, in whichever Debian revision trixie-backports serves: the
# archive keeps only the newest backport of a package.  The project's
# measurements were made with 1:11.1.3+ds-1~bpo13+1; on 2026-11-30 the
# archive replaced it with 1:11.1.3+ds-2~bpo13+1, the same upstream release.
# The root pins the upstream version (UPSTREAM_VERSION_GLOB) and records the
# revision it got; ./apw test compares the contract field by field
# whichever it is.
UPSTREAM_VERSION_GLOB='1:11.1.3+ds-*~bpo13+*'
UPSTREAM_PACKAGES='qemu-system-x86 qemu-utils'
UPSTREAM_DIR=$APW_CACHE/upstream-11.1.3
UPSTREAM_ROOT=$UPSTREAM_DIR/root
# bin/ looks like a build folder to the harness: qemu-system-x86_64,
# storage-daemon/qemu-storage-daemon and pc-bios/optionrom.
UPSTREAM_BIN=$UPSTREAM_DIR/bin
# upstream_version: the Debian revision in the root (after upstream_ensure)
upstream_version() {
    cat "$UPSTREAM_DIR/version" 2>/dev/null || echo "$UPSTREAM_VERSION_GLOB"
}

# upstream_verify: the pinned packages are installed in the root and their
# files are as packaged.  Quiet when all is well.
upstream_verify() {
    local r=$UPSTREAM_ROOT p v first=
    [ -x "$r/lib64/ld-linux-x86-64.so.2" ] || { echo "no trixie root in $r"; return 1; }
    for p in $UPSTREAM_PACKAGES qemu-system-common; do
        v=$(dpkg-query --admindir="$r/var/lib/dpkg" -W -f='${Version}|${Status}' "$p" 2>/dev/null)
        # shellcheck disable=SC2053 # the glob is meant
        [ "${v#*|}" = "install ok installed" ] &&
            [[ "${v%%|*}" == $UPSTREAM_VERSION_GLOB ]] &&
            [ "${first:=${v%%|*}}" = "${v%%|*}" ] || {
            echo "$p in $r is '$v', not an installed $UPSTREAM_VERSION_GLOB as $UPSTREAM_PACKAGES"
            return 1
        }
        (cd "$r" && md5sum -c --quiet "var/lib/dpkg/info/$p.md5sums") || {
            echo "files of $p in $r differ from the package"
            return 1
        }
    done
    UPSTREAM_VERSION=$first
}

# upstream_wrapper NAME PROGRAM [ARGS]: bin/NAME runs the root's PROGRAM
# with the root's loader, libraries and modules (exec: same PID).
upstream_wrapper() {
    local name=$1 prog=$2 r=$UPSTREAM_ROOT
    shift 2
    mkdir -p "$(dirname "$UPSTREAM_BIN/$name")"
    cat > "$UPSTREAM_BIN/$name.tmp.$$" <<EOF
#!/bin/sh
# QEMU $UPSTREAM_VERSION from the trixie root made by ./apw upstream
export QEMU_MODULE_DIR='$r/usr/lib/x86_64-linux-gnu/qemu'
exec '$r/lib64/ld-linux-x86-64.so.2' --argv0 '$(basename "$name")' \\
    --library-path '$r/usr/lib/x86_64-linux-gnu:$r/lib/x86_64-linux-gnu' \\
    '$r/usr/bin/$prog' $* "\$@"
EOF
    chmod +x "$UPSTREAM_BIN/$name.tmp.$$"
    mv -f "$UPSTREAM_BIN/$name.tmp.$$" "$UPSTREAM_BIN/$name"
}

# upstream_ensure: make the root if it is missing or wrong; quiet when it
# is there and verified.  One at a time: a second caller waits for the
# first (./apw test starts one in the background, upstream_prefetch).
upstream_ensure() {
    mkdir -p "$UPSTREAM_DIR"
    ( flock 9 && upstream_ensure_locked ) 9> "$UPSTREAM_DIR/.lock"
}

# upstream_prefetch LOG: if the root is missing, start making it in the
# background, beside the builds; whoever needs it next waits for it in
# upstream_ensure.  It is not free: in the cold CI run of 2026-12-01 it
# took about 100 s of wall-clock time, of which about 48 s of CPU that
# the builds on two cores then lack; the rest (network, disk) overlaps.
# A failure there shows again, in the foreground, when a check calls
# upstream_ensure.  Only whether a root is there is looked at here: the
# full check (md5sums of the packages' files) runs in upstream_ensure, before
# each check that runs the root's binaries, and remakes a root that fails it.
upstream_prefetch() {
    [ -x "$UPSTREAM_ROOT/lib64/ld-linux-x86-64.so.2" ] && return 0
    [ "$(id -u)" = 0 ] && command -v mmdebstrap > /dev/null || return 0
    mkdir -p "$UPSTREAM_DIR"
    say "making the upstream 11.1.3 root in the background (log: $1)"
    ( upstream_ensure > "$1" 2>&1 & )
}

upstream_ensure_locked() {
    local tmp t0 why
    if ! upstream_verify > "$UPSTREAM_DIR/verify.log" 2>&1; then
        why=$(cat "$UPSTREAM_DIR/verify.log")
        [ "$(id -u)" = 0 ] || die "upstream: $why; making the trixie root needs root (mmdebstrap)"
        command -v mmdebstrap >/dev/null || {
            say "installing mmdebstrap"
            DEBIAN_FRONTEND=noninteractive apt-get -qq install -y mmdebstrap >/dev/null 2>&1 || {
                apt-get -qq update >/dev/null
                DEBIAN_FRONTEND=noninteractive apt-get -qq install -y mmdebstrap >/dev/null
            } || die "apt-get install mmdebstrap failed"
        }
        say "making the trixie root with QEMU $UPSTREAM_VERSION_GLOB in $UPSTREAM_ROOT (about 270 MB)"
        t0=$(date +%s)
        tmp=$UPSTREAM_DIR/root.tmp
        rm -rf "$tmp" "$UPSTREAM_ROOT" "$UPSTREAM_DIR/version"
        local inc=
        for p in $UPSTREAM_PACKAGES; do inc=${inc:+$inc,}$p; done
        # Backports first; of QEMU's packages, the 11.1.3 revision it serves
        mmdebstrap --variant=apt --include="$inc" \
            --setup-hook='mkdir -p "$1/etc/apt/preferences.d" && printf "Package: *\nPin: release n=trixie-backports\nPin-Priority: 500\n\nPackage: qemu-*\nPin: version '"$UPSTREAM_VERSION_GLOB"'\nPin-Priority: 1001\n" > "$1/etc/apt/preferences.d/backports"' \
            trixie "$tmp" \
            'deb http://deb.debian.org/debian trixie main' \
            'deb http://deb.debian.org/debian trixie-backports main' \
            > "$UPSTREAM_DIR/mmdebstrap.log" 2>&1 ||
            { rm -rf "$tmp"; die "mmdebstrap failed (see $UPSTREAM_DIR/mmdebstrap.log)"; }
        mv "$tmp" "$UPSTREAM_ROOT"
        upstream_verify > "$UPSTREAM_DIR/verify.log" 2>&1 ||
            die "upstream: $(cat "$UPSTREAM_DIR/verify.log")"
        say "trixie root with QEMU $UPSTREAM_VERSION made in $(( $(date +%s) - t0 )) s"
    fi
    echo "$UPSTREAM_VERSION" > "$UPSTREAM_DIR/version"
    # The wrappers are cheap: remake them each time (atomically, as another
    # run may be using them), so that a moved cache or a changed wrapper
    # never runs stale.
    upstream_wrapper qemu-system-x86_64 qemu-system-x86_64 "-L '$UPSTREAM_ROOT/usr/share/qemu'"
    upstream_wrapper storage-daemon/qemu-storage-daemon qemu-storage-daemon
    upstream_wrapper qemu-img qemu-img
    mkdir -p "$UPSTREAM_BIN/pc-bios"
    ln -sfn "$UPSTREAM_ROOT/usr/share/qemu" "$UPSTREAM_BIN/pc-bios/optionrom"
    "$UPSTREAM_BIN/qemu-system-x86_64" --version | grep -qF "(Debian $UPSTREAM_VERSION)" ||
        die "upstream: $UPSTREAM_BIN/qemu-system-x86_64 does not run or is not $UPSTREAM_VERSION"
}

cmd_upstream() {
    case "${1:-}" in
    -h|--help)
        echo "usage: ./apw upstream   make (once) and check the QEMU $UPSTREAM_VERSION_GLOB root"
        return 0 ;;
    "") ;;
    *) die "unknown upstream option '$1'" ;;
    esac
    upstream_ensure || exit 1
    say "QEMU $(upstream_version) (trixie-backports), pinned and checked, in $UPSTREAM_ROOT"
    cat <<EOF
Run it through the wrappers, which call the root's loader and libraries:
  $UPSTREAM_BIN/qemu-system-x86_64 -M none -object iothread,id=io1 -qmp stdio
  $UPSTREAM_BIN/storage-daemon/qemu-storage-daemon --object iothread,id=io1 ...
  $UPSTREAM_BIN/qemu-img --version
or inside the root: chroot $UPSTREAM_ROOT qemu-system-x86_64 ...
In the benchmark: ./apw bench --variants unpatched,w3,floor,upstream,upstream-floor
EOF
}
