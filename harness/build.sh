# Configure and build profiles.  Sourced by ./apw.
#
#   unit    event-loop unit tests only (bisect steps)
#   all     qemu-system-x86_64 (TCG) + qemu-storage-daemon + unit tests
#   asan    unit tests under ASan+UBSan
#   tsan    unit tests under TSan
#   docs    the manuals only (HTML), Sphinx warnings as errors
#   clang   unit tests built with clang, QEMU's -Werror, under ASan+UBSan
#
# Build folders sit next to their tree: work/BASE/series/build-PROFILE for the
# series, work/BASE/base/build-PROFILE for the unpatched base.

CONF_COMMON="--python=/usr/bin/python3 --without-default-features
    --enable-linux-aio --enable-linux-io-uring --disable-install-blobs
    --enable-debug-info"
CONF_UNIT="--disable-system --disable-user --enable-tools"
CONF_ALL="--target-list=x86_64-softmmu --enable-tcg --enable-tools
    --disable-user --without-default-devices --with-devices-x86_64=apw-minimal
    --enable-fdt=system"

# The unit tests that exercise the event loop; the ones a tree lacks are
# skipped.
EVENT_LOOP_TESTS="test-aio test-aio-multithread test-nested-aio-poll
    test-aio-poll-weight test-thread-pool test-bdrv-drain test-block-iothread"

profile_flags() {
    case "$1" in
    unit) echo "$CONF_UNIT" ;;
    all) echo "$CONF_ALL" ;;
    asan) echo "$CONF_UNIT --enable-asan --enable-ubsan" ;;
    tsan) echo "$CONF_UNIT --enable-tsan" ;;
    # --enable-werror is what turns on sphinx-build -W (docs/meson.build),
    # as in QEMU's own CI; nothing but the manuals is configured.
    docs) echo "--disable-system --disable-user --disable-tools --enable-docs --enable-werror" ;;
    # clang, -Werror and ASan+UBSan in one build, as QEMU's CI pairs clang
    # with the sanitizers: one cold build fewer per base in ./apw test.
    clang) echo "$CONF_UNIT --enable-werror --enable-asan --enable-ubsan" ;;
    *) die "unknown profile '$1' (known: unit all asan tsan docs clang)" ;;
    esac
}

# profile_cc PROFILE: the compilers of the profile, through ccache, one a
# line.
profile_cc() {
    case "$1" in
    clang) printf '%s\n' '--cc=ccache clang' '--cxx=ccache clang++' '--objcc=ccache clang' ;;
    *) printf '%s\n' '--cc=ccache gcc' '--cxx=ccache g++' '--objcc=ccache gcc' ;;
    esac
}

ccache_env() {
    export CCACHE_DIR=${CCACHE_DIR:-$APW_CACHE/ccache}
    export CCACHE_BASEDIR=$APW_WORK CCACHE_NOHASHDIR=1
    export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}
    export CCACHE_SLOPPINESS=time_macros,include_file_mtime,include_file_ctime
}

# configure_profile SRC BUILD PROFILE
configure_profile() {
    local src=$1 bld=$2 prof=$3 flags ccargs
    flags=$(profile_flags "$prof")
    mapfile -t ccargs < <(profile_cc "$prof")
    # Only the docs profile builds the manuals.
    set --
    [ "$prof" = docs ] || set -- --disable-docs
    [ "${ccargs[0]}" = "--cc=ccache gcc" ] ||
        flags="$flags ${ccargs[*]}"
    [ -d "$src" ] || die "no tree at $src: run './apw tree' first"
    if [ -f "$bld/build.ninja" ] && [ "$(cat "$bld/.apw-flags" 2>/dev/null)" = "$flags" ]; then
        return 0
    fi
    rm -rf "$bld"
    mkdir -p "$bld"
    ccache_env
    say "configuring $prof in $bld"
    (cd "$bld" && "$src/configure" $CONF_COMMON $(profile_flags "$prof") "$@" \
        "${ccargs[@]}" > configure.log 2>&1) ||
        die "configure failed for profile $prof: see $bld/configure.log"
    echo "$flags" > "$bld/.apw-flags"
}

# event_loop_targets BUILD: the ninja targets of the event-loop tests.
event_loop_targets() {
    local t
    for t in $EVENT_LOOP_TESTS; do
        grep -q "^build tests/unit/$t:" "$1/build.ninja" && echo "tests/unit/$t"
    done
}

# build_profile SRC BUILD PROFILE [TARGET...]
build_profile() {
    local src=$1 bld=$2 prof=$3 t0
    shift 3
    configure_profile "$src" "$bld" "$prof"
    ccache_env
    # Regenerate build.ninja first if a meson.build changed, so that targets
    # that the tree has gained or lost are known.
    (cd "$bld" && ninja build.ninja > /dev/null 2>&1) ||
        die "meson could not regenerate $bld/build.ninja"
    if [ $# = 0 ]; then
        case "$prof" in
        all) set -- qemu-system-x86_64 storage-daemon/qemu-storage-daemon
             set -- "$@" $(event_loop_targets "$bld")
             grep -q '^build tests/qtest/iothread-poll-weight-test:' "$bld/build.ninja" &&
                 set -- "$@" tests/qtest/iothread-poll-weight-test ;;
        docs) set -- html ;;
        *) set -- $(event_loop_targets "$bld") ;;
        esac
    fi
    t0=$(date +%s)
    (cd "$bld" && ninja -j"$APW_JOBS" "$@" > ninja.log 2>&1) || {
        grep -E 'error|Error' "$bld/ninja.log" | head -n 20 >&2
        die "build of profile $prof failed: see $bld/ninja.log"
    }
    if [ "$prof" = all ] && [ ! -f "$bld/pc-bios/optionrom/linuxboot_dma.bin" ]; then
        make -C "$bld/pc-bios/optionrom" >> "$bld/ninja.log" 2>&1 ||
            die "option ROMs failed to build: see $bld/ninja.log"
    fi
    say "built $prof in $bld ($(( $(date +%s) - t0 )) s)"
}

# The pristine base as a plain tree (no git, so nothing mistakes it for the
# work tree), for the benchmark's unpatched variant.
base_tree() {
    [ -f "$BASE_TREE/.apw-ok" ] && return 0
    local tarball=$APW_CACHE/$ORIG_TARBALL
    sha_ok "$tarball" || cmd_fetch
    rm -rf "$BASE_TREE"
    mkdir -p "$BASE_TREE"
    tar -xf "$tarball" -C "$BASE_TREE" --strip-components=1
    envfix_apply "$BASE_TREE"
    touch "$BASE_TREE/.apw-ok"
}

# ./apw build [--unpatched] PROFILE [TARGET...]
cmd_build() {
    if [ "${1:-}" = --unpatched ]; then
        shift
        local prof=${1:-all}
        shift || true
        base_tree
        build_profile "$BASE_TREE" "$BW/base/build-$prof" "$prof" "$@"
    else
        local prof=${1:-all}
        shift || true
        profile_flags "$prof" >/dev/null
        [ -d "$TREE/.git" ] || cmd_tree
        build_profile "$TREE" "$BW/series/build-$prof" "$prof" "$@"
    fi
}
