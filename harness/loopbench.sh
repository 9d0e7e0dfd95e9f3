# ./apw loopbench: QEMU's event loop on the wall clock, without a guest.
# Sourced by ./apw.
#
# harness/loopbench/aio_loop_bench.c posts events to one polled handler of
# an AioContext from a producer thread, at gaps fixed before the run, and
# measures the AioContext thread's CPU, wakeups and each event's latency.
# It is built (harness/callgrind/build.py) against the unit builds of
# unpatched 10.2.2, of the tree at patch $APW_UPSTREAM_PATCHES (QEMU 11.1's
# policy) and of the whole series; harness/loopbench/run.py runs the
# rounds and writes the report.  Here polling's latency gain is real
# (events come in microseconds, and nothing else is in the way): the
# venue where the guest cannot show it (its own I/O path costs 300 us).

loopbench_usage() {
    cat <<'EOF'
usage: ./apw loopbench [--rounds R] [--pattern P]... [--events-ms MS]
                       [--fdmon poll|default] [--price CPU:LATENCY]
                       [--out DIR] [--report DIR] [--self-test]

Runs harness/loopbench/aio_loop_bench, built against the unit builds of
unpatched 10.2.2 ("unpatched", and "floor" with poll-max-ns=0), of the
tree at patch 8 ("series": QEMU 11.1's policy) and of the whole series
("new"; "new-floor" with poll-max-ns=0), all at poll-weight 3 and
poll-max-ns 32768, for each gap pattern, R rounds (default 10), the
variants' order rotated each round.

Patterns (default all six): fixed:3000 and fixed:8000 (shorter than a
wakeup's price), fixed:20000 (longer than the price, within poll-max-ns:
polling buys latency with CPU), fixed:200000 (longer than poll-max-ns:
polling cannot help), exp:30000 (Poisson arrivals, mean 30 us),
bursts:3000,16,500000 (16 events 3 us apart, then 500 us off).

Writes DIR/samples.csv and DIR/report.md (default work/BASE/loopbench/
<timestamp>): per pattern and variant CPU ns per event, wakeups per
event, mean/p50/p99 latency; paired ratios with 95% t intervals against
the floor and against unpatched, and the share of unpatched's latency
gain over the floor that each keeps (latency: the median event).  About
15 s per round with the defaults.  Keep the host otherwise idle.

  --fdmon F     poll (default): fdmon-poll, ppoll(); default: what
                aio_context_new() picks, io_uring here, where an event that
                came through the fd keeps the next aio_poll() from polling
                (need_wait()), so that in these patterns no build polls
  --price CPU:LATENCY
                add the variant "price": the whole series with another
                price of a blocking wakeup compiled in (AIO_POLL_WAKEUP_NS
                and AIO_POLL_WAKEUP_LATENCY_NS, ns; the tree has 8000:10000),
                e.g. the host's own from harness/wakeup/wakeup_cost.c.  A
                diagnostic, not a patch: harness/loopbench/price_build.py
                compiles util/aio-posix.c again with the two constants
                changed, beside the unit build (work/BASE/loopbench/
                price-CPU-LATENCY/)
  --self-test   build the program against the series' full build (the
                unit build where there is none) and run two short
                functional checks (no timing is judged); check that
                price_build.py changes the constants and nothing else
EOF
}

# loopbench_build OUTDIR: build the program against the three unit builds
loopbench_build() {
    local out=$1 v
    local -A blds trees
    [ -f "$BW/base/build-unit/libqemuutil.a" ] || cmd_build --unpatched unit >&2
    [ -f "$BW/series/build-unit/libqemuutil.a" ] || cmd_build unit >&2
    callgrind_upstream_build
    blds[unpatched]=$BW/base/build-unit trees[unpatched]=$BASE_TREE
    blds[series]=$CG_UPSTREAM_DIR/build-unit trees[series]=$CG_UPSTREAM_DIR/src
    blds[new]=$BW/series/build-unit trees[new]=$TREE
    for v in unpatched series new; do
        harness_program "${blds[$v]}" "${trees[$v]}" loopbench/aio_loop_bench.c "$out/$v"
    done
}

# The functional checks of --self-test: the program ends (every event was
# handled), nothing is polled with poll-max-ns=0, and polling catches
# events 1 us apart.  The project's virtual machines pause now and then
# (the hypervisor's steal time: 20-3900 ms per 4 s window of the two CPUs
# in results/evidence-2026-12-03/; in CI once, a run's threads ran 0.4-1.4
# ms late on average): a run in which one aio_poll() handled every
# measured event (the program exits with 3) is run again, and so is a
# polling run that caught nothing, up to 3 runs each; 20000 events leave
# a pause room.
loopbench_self_test() {
    local bin=$1 line try
    line=$(loopbench_run "$bin" --max-ns=0) ||
        die "loopbench: the floor run failed"
    echo "  floor: $line"
    [ "$(cg_field "$line" by_poll)" = 0 ] ||
        die "loopbench: with poll-max-ns=0 polling caught events"
    for try in 1 2 3; do
        line=$(loopbench_run "$bin") || die "loopbench: the polling run failed"
        echo "  polling: $line"
        [ "$(cg_field "$line" by_poll)" = 0 ] || break
    done
    [ "$(cg_field "$line" by_poll)" -gt 0 ] ||
        die "loopbench: polling caught no event 1 us apart in 3 runs"
    say "loopbench self-test passed"
}

# loopbench_run BIN [OPTION...]: the line of a run of 20000 events 1 us
# apart under fdmon-poll that measured something, in at most 3 runs
loopbench_run() {
    local bin=$1 line try rc
    shift
    for try in 1 2 3; do
        line=$(timeout 60 "$bin" fixed:1000 20000 --fdmon=poll "$@") && rc=0 ||
            rc=$?
        [ $rc = 3 ] || break
    done
    [ $rc = 0 ] && echo "$line"
}

cmd_loopbench() {
    local rounds=10 patterns=() ms=400 out= report= self= bin fdmon=poll
    local price= pvar=()
    while [ $# -gt 0 ]; do
        case "$1" in
        -h|--help) loopbench_usage; return 0 ;;
        --rounds) rounds=${2:?}; shift ;;
        --pattern) patterns+=(--pattern "${2:?}"); shift ;;
        --events-ms) ms=${2:?}; shift ;;
        --fdmon) fdmon=${2:?}; shift ;;
        --price) price=${2:?}; shift ;;
        --out) out=${2:?}; shift ;;
        --report) report=${2:?}; shift ;;
        --self-test) self=1 ;;
        *) die "unknown loopbench option '$1' (./apw loopbench --help)" ;;
        esac
        shift
    done
    if [ -n "$report" ]; then
        /usr/bin/python3 "$APW_ROOT/harness/loopbench/run.py" --report "$report"
        return
    fi
    bin=$BW/loopbench/bin
    if [ -n "$self" ]; then
        local bld=$BW/series/build-all
        if [ ! -f "$bld/libqemuutil.a" ]; then
            bld=$BW/series/build-unit
            [ -f "$bld/libqemuutil.a" ] || cmd_build unit >&2
        fi
        harness_program "$bld" "$TREE" loopbench/aio_loop_bench.c "$bin/new"
        loopbench_self_test "$bin/new/aio_loop_bench"
        callgrind_check_idle "$bld"
        /usr/bin/python3 "$APW_ROOT/harness/loopbench/price_build.py" \
            --check "$bld" "$TREE" "$BW/loopbench/price-check" ||
            die "loopbench: the price build's check failed"
        return
    fi
    [[ $rounds =~ ^[1-9][0-9]*$ ]] || die "--rounds wants a number >= 1"
    case "$fdmon" in poll|default) ;; *) die "--fdmon must be poll or default" ;; esac
    [ -z "$price" ] || [[ $price =~ ^[1-9][0-9]*:[0-9]+$ ]] ||
        die "--price wants CPU:LATENCY in ns, e.g. 1847:3721"
    local f=--fdmon=$fdmon
    loopbench_build "$bin"
    if [ -n "$price" ]; then
        local pdir=$BW/loopbench/price-${price/:/-}
        callgrind_check_idle "$BW/series/build-unit"
        /usr/bin/python3 "$APW_ROOT/harness/loopbench/price_build.py" \
            "$BW/series/build-unit" "$TREE" "${price%%:*}" "${price#*:}" \
            "$pdir" >/dev/null || die "loopbench: the price build failed"
        harness_program "$pdir/build" "$TREE" loopbench/aio_loop_bench.c "$bin/price"
        pvar=(--variant "price=$bin/price/aio_loop_bench:--weight=3 $f")
    fi
    [ -n "$out" ] || out=$BW/loopbench/$(date +%Y%m%d-%H%M%S)
    /usr/bin/python3 "$APW_ROOT/harness/loopbench/run.py" --out "$out" \
        --rounds "$rounds" --events-ms "$ms" ${patterns[@]+"${patterns[@]}"} \
        --variant "unpatched=$bin/unpatched/aio_loop_bench:$f" \
        --variant "floor=$bin/unpatched/aio_loop_bench:--max-ns=0 $f" \
        --variant "series=$bin/series/aio_loop_bench:--weight=3 $f" \
        --variant "new=$bin/new/aio_loop_bench:--weight=3 $f" \
        --variant "new-floor=$bin/new/aio_loop_bench:--max-ns=0 --weight=3 $f" \
        ${pvar[@]+"${pvar[@]}"}
    say "results in $out"
}
