# ./apw test: every check of the series, ending with "N passed, N failed".
# Sourced by ./apw.

T_PASS=0
T_FAIL=0
T_FAILED=
T_LOGS=

# check NAME COMMAND...: run one check, its output in a log of its own.
check() {
    local name=$1 log t0
    shift
    log=$T_LOGS/$(echo "$name" | tr -c 'A-Za-z0-9_.\n-' '_').log
    t0=$(date +%s)
    if ( "$@" ) > "$log" 2>&1; then
        T_LAST=0
        T_PASS=$((T_PASS + 1))
        printf 'ok   %-58s %4ss\n' "$name" "$(( $(date +%s) - t0 ))"
    else
        T_LAST=1
        T_FAIL=$((T_FAIL + 1))
        T_FAILED="$T_FAILED
  $name: $log"
        printf 'FAIL %-58s %4ss\n' "$name" "$(( $(date +%s) - t0 ))"
        tail -n 15 "$log" | sed 's/^/     | /'
    fi
}

checkpatch_one() {
    "$TREE/scripts/checkpatch.pl" --no-tree "$PATCHES/$1"
}

# test_args TEST: the glib -s options that skip the base's TEST_SKIPS
# (harness/common.sh says why each is skipped).
test_args() {
    local s
    for s in $TEST_SKIPS; do
        [ "${s%%:*}" != "$(basename "$1")" ] || printf -- '-s\n%s\n' "${s#*:}"
    done
}

# run_one BUILD TEST: run one test binary directly (meson test would first
# rebuild everything).  test-nested-aio-poll skips when io_uring works, so
# it runs a second time with io_uring_setup failing: then fdmon-poll is used
# and the test really runs, and a skip there is a failure.  strace stops it
# only at io_uring_setup (--seccomp-bpf), not at every system call, which
# held up each ppoll() of the test.  That run may hang for a reason of the
# test's own (RUN_ALONE below): one that runs out of its 60 s (the test
# takes milliseconds) is run once more, and fails only if it hangs again.
run_one() {
    local bld=$1 t=$2 out rc try
    echo "== $t"
    timeout 600 "$bld/$t" $(test_args "$t") || { echo "FAILED: $t"; return 1; }
    case "$t" in
    */test-nested-aio-poll)
        echo "== $t (fdmon-poll)"
        for try in 1 2; do
            # LeakSanitizer cannot work under ptrace
            out=$(ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" \
                  timeout "${NESTED_TIMEOUT:-60}" strace -f -qq --seccomp-bpf \
                      -o /dev/null -e trace=io_uring_setup \
                      -e inject=io_uring_setup:error=ENOSYS "$bld/$t" 2>&1)
            rc=$?
            [ $rc = 124 ] && [ $try = 1 ] || break
            echo "$out"
            echo "timed out after ${NESTED_TIMEOUT:-60} s (its first blocking aio_poll() took over 1 ms?); once more"
        done
        [ $rc = 0 ] ||
            { echo "$out"; echo "FAILED: $t (fdmon-poll)"; return 1; }
        echo "$out"
        if grep -q '# SKIP' <<< "$out"; then
            echo "FAILED: $t skipped under fdmon-poll"
            return 1
        fi
        ;;
    esac
}

# Tests that run_tests runs on their own, once the others have finished.
# test-nested-aio-poll sets poll-max-ns to 1 ms, clears its fd and then
# relies on polling alone to see its next event; if its first blocking
# aio_poll() takes longer than 1 ms, polling never starts and it waits
# forever.  Unpatched 10.0.13 hangs so whenever ppoll() is held up 2 ms
# (strace -e inject=ppoll:delay_exit=2000), as do patches 1 and 2 (tried;
# the whole series does not).  Beside the other event-loop tests on two
# cores that happened in 1 of 63 rounds here and once in CI (10.0.13,
# patch 2); on its own, in none of 600 runs, nor of 300 beside three busy
# loops.  It takes milliseconds.  It still hung once on its own in CI
# (10.0.13, patch 4, under fdmon-poll, 2026-12-03), at a time when a loop
# benchmark's threads pinned to the other CPU ran late by 0.4-1.4 ms:
# run_one gives that run a second try.
RUN_ALONE="test-nested-aio-poll"

# run_tests BUILD TARGET...: the tests side by side, as meson test runs
# them (most of their time is sleep: test-aio's timers, test-thread-pool's
# work items; the step's tests take 7.5 s instead of 15 s), then those of
# RUN_ALONE one at a time, their output one after the other in the order
# given.
run_tests() {
    local bld=$1 dir i rc=0 pids=() alone=()
    shift
    [ $# -gt 0 ] || return 0
    dir=$(mktemp -d)
    for ((i = 1; i <= $#; i++)); do
        if [[ " $RUN_ALONE " == *" $(basename "${!i}") "* ]]; then
            alone+=("$i")
            continue
        fi
        run_one "$bld" "${!i}" > "$dir/$i.log" 2>&1 &
        pids+=($!)
    done
    for i in ${pids[@]+"${pids[@]}"}; do
        wait "$i" || rc=1
    done
    for i in ${alone[@]+"${alone[@]}"}; do
        run_one "$bld" "${!i}" > "$dir/$i.log" 2>&1 || rc=1
    done
    for ((i = 1; i <= $#; i++)); do
        cat "$dir/$i.log"
    done
    rm -rf "$dir"
    return $rc
}

# Bisectability: the tree at patch $1 builds and passes the event-loop tests.
# A test binary that the build left as it was at the patch before (a patch
# of docs, or of another test) passed there, and is not run again.
bisect_step() {
    local n=$1 sha bld=$BW/series/build-all t stamp run=() kept=()
    sha=$(git -C "$TREE" rev-list --reverse base..work | sed -n "${n}p")
    git -C "$TREE" checkout -q "$sha"
    configure_profile "$TREE" "$bld" all
    (cd "$bld" && ninja build.ninja > /dev/null) || return 1
    stamp=$bld/.apw-bisect-stamp
    [ "$n" = 1 ] && rm -f "$stamp"
    build_profile "$TREE" "$bld" all $(event_loop_targets "$bld") || return 1
    for t in $(event_loop_targets "$bld"); do
        if [ -f "$stamp" ] && [ ! "$bld/$t" -nt "$stamp" ] &&
           grep -qxF "$t" "$stamp"; then
            kept+=("$t")
        else
            run+=("$t")
        fi
    done
    [ ${#kept[@]} = 0 ] || echo "unchanged since patch $((n - 1)), passed there: ${kept[*]}"
    run_tests "$bld" ${run[@]+"${run[@]}"} || { rm -f "$stamp"; return 1; }
    # The binaries that pass at this patch, as of now
    event_loop_targets "$bld" > "$stamp.new" && mv "$stamp.new" "$stamp"
}

# The softfloat conformance tests: tests/fp and the berkeley-softfloat-3
# and berkeley-testfloat-3 subprojects, which nothing else links (output
# paths, which are also their source paths); and what else their sources
# include, besides those: fpu/ and the generic headers of include/qemu and
# include/fpu.
FP_TEST_DIRS="tests/fp/ subprojects/berkeley-"
FP_TEST_INCLUDES="fpu/ include/fpu/ include/qemu/"

# full_build_targets BUILD: every target the configuration builds by
# default, less the softfloat conformance tests unless the series touches
# their paths: a quarter of the build's compilations (461 of 1846 on
# 10.2.2; none of them depends on a file that the series changes, by the
# build's own dependency files) and 50 s of a cold build on two cores.
full_build_targets() {
    local bld=$1 p
    for p in $FP_TEST_DIRS $FP_TEST_INCLUDES; do
        if git -C "$TREE" diff --name-only base..work | grep -q "^$p"; then
            echo all
            return
        fi
    done
    (cd "$bld" && meson introspect --targets) | python3 -c '
import json, os, sys
bld, left_out = sys.argv[1], tuple(sys.argv[2:])
for t in json.load(sys.stdin):
    if not t["build_by_default"]:
        continue
    for f in t["filename"]:
        rel = os.path.relpath(f, bld)
        if not rel.startswith(left_out):
            print(rel)
' "$bld" $FP_TEST_DIRS
}

full_build() {
    local bld=$BW/series/build-all targets
    configure_profile "$TREE" "$bld" all
    ccache_env
    (cd "$bld" && ninja build.ninja > /dev/null) || return 1
    targets=$(full_build_targets "$bld") || return 1
    [ -n "$targets" ] || { echo "no targets to build"; return 1; }
    echo "== ninja $(echo "$targets" | wc -l) targets (softfloat tests left out unless 'all')"
    (cd "$bld" && ninja -j"$APW_JOBS" $targets) || return 1
    make -C "$bld/pc-bios/optionrom" >/dev/null
}

# The unit suite; a test with skips runs on its own, with them.
unit_suite() {
    local bld=$BW/series/build-all s names=() skipped=()
    [ -n "$TEST_SKIPS" ] || {
        (cd "$bld" && meson test --no-rebuild --suite unit --print-errorlogs \
            --num-processes "$APW_JOBS")
        return
    }
    for s in $TEST_SKIPS; do skipped+=("${s%%:*}"); done
    mapfile -t names < <(cd "$bld" && meson test --no-rebuild --list --suite unit 2>/dev/null |
        sed -n 's|^[^ ]*:unit / ||p' | grep -vxF -f <(printf '%s\n' "${skipped[@]}"))
    [ ${#names[@]} -gt 0 ] || { echo "no unit tests listed"; return 1; }
    (cd "$bld" && meson test --no-rebuild --suite unit --print-errorlogs \
        --num-processes "$APW_JOBS" "${names[@]}") || return 1
    run_tests "$bld" $(for s in "${skipped[@]}"; do echo "tests/unit/$s"; done)
}

qtest_poll_weight() {
    (cd "$BW/series/build-all" &&
     meson test --no-rebuild --print-errorlogs qtest-x86_64/iothread-poll-weight-test)
}

sanitizer_run() {
    local prof=$1 bld=$BW/series/build-$1
    shift
    build_profile "$TREE" "$bld" "$prof" "$@" && run_tests "$bld" "$@"
}

# The gcc ASan+UBSan build (./apw build asan); ./apw test runs the
# sanitizers in the clang build instead (clang_run).
asan_run() {
    UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1 \
    ASAN_OPTIONS=abort_on_error=1 \
        sanitizer_run asan tests/unit/test-aio-poll-weight tests/unit/test-aio \
            tests/unit/test-aio-multithread tests/unit/test-nested-aio-poll
}

tsan_run() {
    TSAN_OPTIONS="halt_on_error=1:suppressions=$APW_ROOT/harness/tsan.supp" \
        sanitizer_run tsan tests/unit/test-aio-poll-weight
}

# The replay tool: pinned figures and its model of the unpatched policy
# against recorded real runs.
replay_check() {
    local out=$BW/replay-test
    cmd_replay --out "$out" || return 1
    if grep -q '^skipped' "$out/model-check.log"; then
        echo "the model check did not run: $(cat "$out/model-check.log")"
        return 1
    fi
}

# The manuals, built as QEMU's CI builds them (--enable-werror: sphinx-build
# -W), must hold the series' documentation.
docs_check() {
    local bld=$BW/series/build-docs
    build_profile "$TREE" "$bld" docs || return 1
    /usr/bin/python3 "$APW_ROOT/harness/docs/check_html.py" "$TREE" "$bld/docs/manual"
}

# The last patch built by clang with QEMU's -Werror and ASan+UBSan; the
# event-loop tests pass under it with no sanitizer finding.
clang_run() {
    local bld=$BW/series/build-clang
    build_profile "$TREE" "$bld" clang || return 1
    UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1 \
    ASAN_OPTIONS=abort_on_error=1 \
        run_tests "$bld" $(event_loop_targets "$bld")
}

# A running daemon's policy uses the poll-weight that qom-set gives it.
weight_e2e() {
    /usr/bin/python3 "$APW_ROOT/harness/e2e/weight_test.py" \
        --qsd "$BW/series/build-all/storage-daemon/qemu-storage-daemon" \
        --qemu-src "$TREE"
}

# The contract against upstream QEMU 11.1.3 (./apw upstream makes its root
# once): the qtest's cases sent to both, replies compared field by field;
# a difference passes only if it is a known one that the base's cover
# letter names.
upstream_contract() {
    upstream_ensure || return 1
    /usr/bin/python3 "$APW_ROOT/harness/upstream/contract.py" \
        --upstream "$UPSTREAM_BIN/qemu-system-x86_64" \
        --series "$BW/series/build-all/qemu-system-x86_64" \
        --qemu-src "$TREE" --base "$APW_BASE" \
        --cover-letter "$PATCHES/cover-letter.txt" --dump "$BW/upstream-contract"
}

# The series' own qtest, run against upstream's binary.
upstream_qtest() {
    upstream_ensure || return 1
    QTEST_QEMU_BINARY="$UPSTREAM_BIN/qemu-system-x86_64" \
        timeout 600 "$BW/series/build-all/tests/qtest/iothread-poll-weight-test"
}

loopbench_check() {
    /usr/bin/python3 "$APW_ROOT/harness/loopbench/test_loopbench.py" &&
        cmd_loopbench --self-test
}

load_test() {
    /usr/bin/python3 "$APW_ROOT/harness/e2e/load_test.py" \
        --qsd "$BW/series/build-all/storage-daemon/qemu-storage-daemon" \
        --qemu-src "$TREE" --runtime "${APW_LOAD_RUNTIME:-30}"
}

cmd_test() {
    local n i p
    T_LOGS=$BW/test-logs
    say "aio-poll-weight tests: base $APW_BASE, logs in $T_LOGS"
    cmd_deps
    cmd_fetch
    cmd_tree
    rm -rf "$T_LOGS"
    mkdir -p "$T_LOGS"
    upstream_prefetch "$T_LOGS/upstream-root.log"
    n=$(series_list | wc -l)

    check "series applies and round-trips byte for byte" cmd_roundtrip
    i=0
    for p in $(series_list); do
        i=$((i + 1))
        check "checkpatch, patch $i/$n" checkpatch_one "$p"
    done

    check "series applies on Debian's patch stack ($DEB_VERSION, quilt)" cmd_debian_stack
    check "benchmark harness: offline self-test" cmd_bench --self-test
    check "harness: run_tests and the softfloat guard (fake binaries)" \
        bash "$APW_ROOT/harness/selftest/test_test_sh.sh"

    # Leave the tree on its branch whatever happens in the bisect steps.
    trap 'git -C "$TREE" checkout -q work' EXIT
    for i in $(seq 1 "$n"); do
        check "patch $i/$n builds, event-loop tests pass" bisect_step "$i"
    done
    git -C "$TREE" checkout -q work
    trap - EXIT

    check "full build (system, storage daemon, tests; not tests/fp)" full_build
    if [ "$T_LAST" = 0 ]; then
        check "unit test suite (meson test --suite unit)" unit_suite
        check "qtest iothread-poll-weight-test" qtest_poll_weight
        check "replay: pinned figures, model of 10.2.2 vs recorded runs" replay_check
        # With --base all, on the first base only: the committed traces and
        # tables are the same for both, and the backport's policy code is
        # replayed against the pinned figures just above
        if [ -z "${APW_ALL_BASES:-}" ] || [ "$APW_BASE" = "${APW_BASES%% *}" ]; then
            check "replay: priced; the recordings give the committed validation" evidence_check
            check "replay: the exact recording, polling and wakeups within 10%" evidence_exact_check
        else
            echo "--   replay, priced: run on ${APW_BASES%% *} only with --base all"
        fi
        check "bench: runner, statistics and report unit tests" \
            /usr/bin/python3 "$APW_ROOT/harness/bench/test_bench.py"
        check "loopbench: the event-loop program works, its report's unit tests" \
            loopbench_check
        check "upstream 11.1.3: contract compared field by field" upstream_contract
        check "upstream 11.1.3: the series' qtest against upstream" upstream_qtest
        check "fio verify under a QMP parameter storm" load_test
        check "qom-set poll-weight reaches the policy (trace events)" weight_e2e
    fi
    check "docs: manuals build with -W and hold the series' docs" docs_check
    # With --base all, the clang and TSan builds run on the first base only:
    # the code they check (the series' code, the poll parameters set from
    # another thread) is the same on both bases but for a few lines of
    # context, and their builds are among the longest of a cold run, which
    # has to stay under an hour.  ./apw --base 10.0.13 test runs both on the
    # backport.
    if [ -z "${APW_ALL_BASES:-}" ] || [ "$APW_BASE" = "${APW_BASES%% *}" ]; then
        check "clang -Werror, ASan+UBSan: event-loop tests pass" clang_run
        check "TSan: poll parameters changed from another thread" tsan_run
    else
        echo "--   clang -Werror, ASan+UBSan and TSan: run on ${APW_BASES%% *} only with --base all"
    fi

    if [ -n "$T_FAILED" ]; then
        echo "failed:$T_FAILED"
    fi
    echo "$T_PASS passed, $T_FAIL failed"
    [ "$T_FAIL" = 0 ]
}
