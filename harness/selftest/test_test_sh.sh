#!/usr/bin/env bash
# Unit tests of harness/test.sh's own rules, with fake test binaries, a fake
# meson and a scratch git repository; no QEMU build is needed.
#
#   run_tests: the tests run side by side (each fake waits until all of them
#   have started: run one after the other, the first would time out), their
#   output comes in the order given, and any failure fails the step; those
#   of RUN_ALONE (test-nested-aio-poll) run once the others have finished;
#   run_one: test-nested-aio-poll runs a second time under strace with
#   io_uring_setup failing (strace stopping it only there), and a failure
#   or a skip there fails it; a run there that hangs gets one more try;
#   loopbench_run (harness/loopbench.sh): a run that measured nothing
#   (exit 3) runs again, up to 3 runs, a failure does not;
#   full_build_targets: the softfloat conformance tests are left out,
#   unless the series touches their paths or what they include.
#
# Run by ./apw test ("harness: run_tests and the softfloat guard"); on its
# own: bash harness/selftest/test_test_sh.sh
set -euo pipefail
. "$(dirname "$0")/../common.sh"
. "$APW_ROOT/harness/test.sh"
TEST_SKIPS=

PASSED=0
FAILED=0
ok() { PASSED=$((PASSED + 1)); echo "ok   $*"; }
bad() { FAILED=$((FAILED + 1)); echo "FAIL $*"; }

SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
BLD=$SCRATCH/build
mkdir -p "$BLD/tests/unit"

# fake NAME BODY: a test binary (a shell script) that runs BODY
fake() {
    printf '#!/bin/bash\n%s\n' "$2" > "$BLD/tests/unit/$1"
    chmod +x "$BLD/tests/unit/$1"
}

# A fake that says it started, waits (up to 20 s) until the other
# side-by-side fakes of its group have started too, and prints its name.
BARRIER=$SCRATCH/barrier
barrier_fake() {
    local name=$1 group=$2 rc=${3:-0}
    fake "$name" "
touch '$BARRIER/$name'
for i in \$(seq 200); do
    [ \$(ls '$BARRIER' | grep -c '^$group') -ge 3 ] && break
    sleep 0.1
done
[ \$(ls '$BARRIER' | grep -c '^$group') -ge 3 ] || { echo 'alone: $name'; exit 1; }
echo 'output of $name'
exit $rc"
}

# --- run_tests: side by side, in order, failures count ---
mkdir -p "$BARRIER"
barrier_fake good-a good
barrier_fake good-b good
barrier_fake good-c good
out=$(run_tests "$BLD" tests/unit/good-c tests/unit/good-a tests/unit/good-b 2>&1) &&
    rc=0 || rc=$?
if [ "$rc" = 0 ]; then
    ok "run_tests: three passing tests that need each other running pass"
else
    bad "run_tests: three passing tests that need each other running: rc $rc"
    echo "$out"
fi
order=$(grep -o 'output of good-.' <<< "$out" | tr '\n' ' ')
if [ "$order" = "output of good-c output of good-a output of good-b " ]; then
    ok "run_tests: outputs in the order given"
else
    bad "run_tests: outputs in the order '$order'"
fi

rm -rf "$BARRIER"; mkdir -p "$BARRIER"
barrier_fake fail-a fail
barrier_fake fail-b fail 1
barrier_fake fail-c fail
out=$(run_tests "$BLD" tests/unit/fail-a tests/unit/fail-b tests/unit/fail-c 2>&1) &&
    rc=0 || rc=$?
if [ "$rc" != 0 ] && grep -q 'FAILED: tests/unit/fail-b' <<< "$out" &&
   grep -q 'output of fail-c' <<< "$out"; then
    ok "run_tests: one failing test fails the step, the others still report"
else
    bad "run_tests: one failing test: rc $rc"
    echo "$out"
fi

if run_tests "$BLD" > /dev/null 2>&1; then
    ok "run_tests: no tests is a pass"
else
    bad "run_tests: no tests failed"
fi

# --- run_tests: a test of RUN_ALONE runs once the others have finished ---
rm -rf "$BARRIER"; mkdir -p "$BARRIER"
barrier_fake alone-a alone
barrier_fake alone-b alone
barrier_fake alone-c alone
fake test-nested-aio-poll "
if pgrep -f '$BLD/tests/unit/alone-' > /dev/null; then
    echo 'test-nested-aio-poll: not alone'; exit 1
fi
echo 'output of test-nested-aio-poll'"
out=$(run_tests "$BLD" tests/unit/alone-a tests/unit/test-nested-aio-poll \
          tests/unit/alone-b tests/unit/alone-c 2>&1) && rc=0 || rc=$?
if [ "$rc" = 0 ] &&
   [ "$(grep -o 'output of [a-z-]*' <<< "$out" | uniq | tr '\n' ' ')" = \
     "output of alone-a output of test-nested-aio-poll output of alone-b output of alone-c " ]; then
    ok "run_tests: test-nested-aio-poll runs alone, its output in the order given"
else
    bad "run_tests: test-nested-aio-poll beside the others: rc $rc"
    echo "$out"
fi

# --- run_one: test-nested-aio-poll under fdmon-poll ---
# The fakes tell the second run by its tracer (strace).
traced='[ "$(sed -n "s/^TracerPid:[[:space:]]*//p" /proc/self/status)" != 0 ]'
# nested WANT WHAT BODY: run_one on a fake test-nested-aio-poll running
# BODY must pass (WANT 0) or fail (WANT 1)
nested() {
    local rc=0
    fake test-nested-aio-poll "$3"
    out=$(run_one "$BLD" tests/unit/test-nested-aio-poll 2>&1) || rc=1
    if [ "$rc" = "$1" ]; then
        ok "run_one: $2"
    else
        bad "run_one: $2 (rc $rc)"
        echo "$out"
    fi
}
nested 0 "test-nested-aio-poll skips, then passes under strace" \
    "if $traced; then echo ok 1 - traced; else echo '# SKIP io_uring'; fi"
if grep -q 'ok 1 - traced' <<< "$out"; then
    ok "run_one: the second run of test-nested-aio-poll is under strace"
else
    bad "run_one: no second run under strace"
fi
nested 1 "a skip under fdmon-poll fails" \
    "if $traced; then echo '# SKIP no fdmon-poll'; fi"
nested 1 "a failure under fdmon-poll fails" \
    "if $traced; then echo 'not ok 1'; exit 1; fi"
nested 1 "a failure of the first run fails" "exit 1"
# strace stops the test only at the system calls it traces (--seccomp-bpf:
# the kernel filters them, Seccomp 2), not at each ppoll()
nested 0 "under strace, the test runs with a seccomp filter" \
    "if $traced; then grep -q '^Seccomp:[[:space:]]*2' /proc/self/status || exit 1; fi"
# A run under strace that hangs is run once more; one that fails is not
TRIES=$SCRATCH/tries
count='echo x >> '"$TRIES"'; n=$(wc -l < '"$TRIES"')'
export NESTED_TIMEOUT=1
: > "$TRIES"
nested 0 "a hang under fdmon-poll, then a pass: passes" \
    "if $traced; then $count; [ \$n -gt 1 ] || sleep 5; echo ok 1; fi"
: > "$TRIES"
nested 1 "a hang under fdmon-poll twice fails" \
    "if $traced; then $count; sleep 5; fi"
if [ "$(wc -l < "$TRIES")" = 2 ]; then
    ok "run_one: a hang is tried twice, not more"
else
    bad "run_one: a hang was tried $(wc -l < "$TRIES") times"
fi
: > "$TRIES"
nested 1 "a failure under fdmon-poll is not tried again" \
    "if $traced; then $count; [ \$n -gt 1 ] || exit 1; echo ok 1; fi"
unset NESTED_TIMEOUT

# --- loopbench_run: a run that measured nothing (exit 3) runs again ---
. "$APW_ROOT/harness/loopbench.sh"
LB=$SCRATCH/lb
# lb_fake CODES...: a loop benchmark that exits with the next of CODES (one
# per run, the last repeated) and prints a line when it exits with 0
lb_fake() {
    printf '%s\n' "$@" > "$LB.codes"
    : > "$LB.runs"
    printf '%s\n' '#!/bin/bash' \
        "echo x >> '$LB.runs'; n=\$(wc -l < '$LB.runs')" \
        "c=\$(sed -n \"\${n}p\" '$LB.codes'); [ -n \"\$c\" ] || c=\$(tail -n 1 '$LB.codes')" \
        "[ \"\$c\" = 0 ] && echo \"events=20000 by_poll=\$n\"" \
        "exit \$c" > "$LB"
    chmod +x "$LB"
}
# lb_case WANT RUNS WHAT CODES...: loopbench_run's status and its runs
lb_case() {
    local want=$1 runs=$2 what=$3 rc=0
    shift 3
    lb_fake "$@"
    loopbench_run "$LB" > /dev/null 2>&1 || rc=1
    if [ "$rc" = "$want" ] && [ "$(wc -l < "$LB.runs")" = "$runs" ]; then
        ok "loopbench_run: $what"
    else
        bad "loopbench_run: $what (rc $rc, $(wc -l < "$LB.runs") runs)"
    fi
}
lb_case 0 3 "nothing measured twice, then a run: passes" 3 3 0
lb_case 1 3 "nothing measured three times fails" 3
lb_case 1 1 "a failure is not run again" 1 0
lb_case 0 1 "a run that measured passes at once" 0

# --- full_build_targets: the softfloat guard ---
# A fake meson whose introspection lists one target of each kind.
mkdir -p "$SCRATCH/bin"
cat > "$SCRATCH/bin/meson" <<EOF
#!/bin/bash
[ "\$*" = "introspect --targets" ] || exit 1
cat <<'JSON'
[{"build_by_default": true, "filename": ["$BLD/qemu-system-x86_64"]},
 {"build_by_default": true, "filename": ["$BLD/tests/unit/test-aio"]},
 {"build_by_default": true, "filename": ["$BLD/tests/fp/fp-test"]},
 {"build_by_default": true, "filename": ["$BLD/subprojects/berkeley-softfloat-3/libsoftfloat.a"]},
 {"build_by_default": false, "filename": ["$BLD/tests/unit/not-default"]}]
JSON
EOF
chmod +x "$SCRATCH/bin/meson"
PATH=$SCRATCH/bin:$PATH

TREE=$SCRATCH/tree
git init -q "$TREE"
gitc() { git -C "$TREE" -c user.name=t -c user.email=t@t.invalid "$@"; }
mkdir -p "$TREE/util"
echo base > "$TREE/util/aio-posix.c"
gitc add -A; gitc commit -qm base; gitc branch base
gitc checkout -qb work

# series_touching PATH: a work branch whose one patch changes PATH
series_touching() {
    gitc checkout -q base
    gitc branch -qD work
    gitc checkout -qb work
    mkdir -p "$TREE/$(dirname "$1")"
    echo change >> "$TREE/$1"
    gitc add -A; gitc commit -qm "touch $1"
}

series_touching util/aio-posix.c
want='qemu-system-x86_64 tests/unit/test-aio '
got=$(full_build_targets "$BLD" | tr '\n' ' ')
if [ "$got" = "$want" ]; then
    ok "full_build_targets: the softfloat tests and non-default targets left out"
else
    bad "full_build_targets: '$got', expected '$want'"
fi
for p in tests/fp/fp-test.c subprojects/berkeley-testfloat-3/x.c fpu/softfloat.c \
         include/fpu/softfloat.h include/qemu/osdep.h; do
    series_touching "$p"
    got=$(full_build_targets "$BLD" | tr '\n' ' ')
    if [ "$got" = "all " ]; then
        ok "full_build_targets: all, when the series touches $p"
    else
        bad "full_build_targets: '$got' when the series touches $p"
    fi
done

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
