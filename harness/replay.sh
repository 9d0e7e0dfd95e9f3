# Exact replay of aio_poll() traces against the offline oracle:
# ./apw replay [OPTIONS]; ./apw replay --help.  Sourced by ./apw.
# The tool is harness/replay/aio-poll-replay.c, built against the series'
# build; the helpers are Python 3 under harness/replay/.

REPLAY_PY=/usr/bin/python3
REPLAY_DIR=$APW_ROOT/harness/replay
REPLAY_SYNTH="synth:fixed synth:bimodal synth:poisson synth:onoff"

replay_usage() {
    cat <<EOF
usage: ./apw replay [OPTIONS]

Builds harness/replay/aio-poll-replay.c against the series build (gcc with the
flags and link line of tests/unit/test-aio-poll-weight; no meson, no
ninja, the build folder is only read), replays the synthetic traces and
harness/replay/traces/*.trace through the series at poll-weight 1..6,
through a model of unpatched 10.2.2 and through the offline oracle, and
writes:
  report.md       tables: caught events, blocking waits, polling time,
                  distance from the oracle
  results.csv     the same, one row per trace and policy
  frontier.csv    the oracle's frontier (least polling per caught events)
  poll-replay.png polling time against caught events, one panel a trace
  check.log       the pinned-figure check (aio-poll-replay --check)
  model-check.log the model of unpatched 10.2.2 against recorded real runs
                  (aio-poll-replay --model-check harness/replay/traces/
                  *.modelcheck; see harness/replay/README.md)
The figures are exact: the same on every run and machine.  Fails if a
check fails.  A few seconds.

Options:
  --build DIR   series build folder (default work/BASE/series/build-all)
  --src FILE    the tool's source (default harness/replay/aio-poll-replay.c)
  --out DIR     output folder (default work/BASE/replay)
  -h, --help    this text

Recording a trace from a real run: harness/replay/record.py --help.
EOF
}

# priced_case OUT NAME CPU LAT ROWS [ARGS...]: the priced replay of
# tests/NAME.trace at a wakeup of CPU ns of CPU and LAT ns of latency, with
# ARGS, keeping the header and the rows that match the regex ROWS, must
# give tests/NAME.expected; NAME may be TRACE@CASE, for another case of
# tests/TRACE.trace
priced_case() {
    local out=$1 name=$2 cpu=$3 lat=$4 rows=$5
    shift 5
    (cd "$REPLAY_DIR" && "$out/aio-poll-replay" --priced "$@" \
        --wakeup-cpu "$cpu" --wakeup-latency "$lat" "tests/${name%@*}.trace" |
        grep -E "^trace,|$rows" > "$out/$name.csv") &&
        diff -u "$REPLAY_DIR/tests/$name.expected" "$out/$name.csv" ||
        die "replay: the priced replay of tests/${name%@*}.trace" \
            "no longer gives tests/$name.expected"
}

# refused_case OUT LINE MESSAGE: the priced replay must refuse a trace of
# the one line LINE with an error that says MESSAGE, and read nothing
refused_case() {
    local out=$1 line=$2 msg=$3
    printf '%s\n' "$line" > "$out/refused.trace"
    if "$out/aio-poll-replay" --priced "$out/refused.trace" \
        > "$out/refused.csv" 2> "$out/refused.err"; then
        die "replay: a trace line '$line' was not refused"
    fi
    grep -qF "$msg" "$out/refused.err" && [ ! -s "$out/refused.csv" ] ||
        die "replay: '$line' was refused without saying '$msg':" \
            "$(cat "$out/refused.err")"
}

cmd_replay() {
    local build=$BW/series/build-all out=$BW/replay src=
    while [ $# -gt 0 ]; do
        case $1 in
        --build) build=${2:?--build needs a folder}; shift 2 ;;
        --src) src=${2:?--src needs a file}; shift 2 ;;
        --out) out=${2:?--out needs a folder}; shift 2 ;;
        -h|--help) replay_usage; return 0 ;;
        *) die "replay: unknown option '$1' (./apw replay --help)" ;;
        esac
    done
    [ -f "$build/libqemuutil.a" ] && [ -f "$build/compile_commands.json" ] ||
        die "replay: no built series in $build (./apw build all)"
    mkdir -p "$out"
    out=$(cd "$out" && pwd)
    [ -n "$src" ] || src=$REPLAY_DIR/aio-poll-replay.c
    [ -f "$src" ] || die "replay: no $src"

    say "building aio-poll-replay from $src"
    "$REPLAY_PY" "$REPLAY_DIR/build.py" "$build" "$src" \
        "$out/aio-poll-replay" || die "replay: the build failed"

    # Relative trace names, so that the report is the same everywhere
    local traces=() t
    for t in "$REPLAY_DIR"/traces/*.trace; do
        [ -f "$t" ] && traces+=("traces/${t##*/}")
    done
    say "replaying $REPLAY_SYNTH ${traces[*]}"
    (cd "$REPLAY_DIR" &&
        "$out/aio-poll-replay" --report "$out/report.md" \
            --csv "$out/results.csv" --frontier "$out/frontier.csv" \
            $REPLAY_SYNTH "${traces[@]}") || die "replay: the replay failed"
    "$REPLAY_PY" "$REPLAY_DIR/plot.py" "$out/results.csv" \
        "$out/frontier.csv" "$out/poll-replay.png" ||
        die "replay: the plot failed"

    say "checking the pinned figures"
    if ! "$out/aio-poll-replay" --check >"$out/check.log" 2>&1; then
        cat "$out/check.log"
        die "replay: the pinned-figure check failed ($out/check.log)"
    fi
    tail -n 1 "$out/check.log"

    # The priced replay must give the figures worked out by hand
    # (tests/README.md): every row of a five-iteration trace
    say "checking the priced replay against hand-made traces"
    priced_case "$out" priced-small 2000 2000 .
    # ... a trace recorded under a polling policy (caught events, the
    # recorded polling as a bound): the references
    priced_case "$out" priced-caught 10000 2000 \
        ',(never-poll|poll-to-max|best-fixed|optimum),'
    # ... the waits that the fd monitor kept from polling: not counted by
    # the policy of patches 9-13 (patch 13)
    priced_case "$out" priced-needwait 2000 2000 ',new-w3,'
    # ... the references within a latency budget, where it binds
    priced_case "$out" priced-latbudget 2000 2000 \
        ',(unpatched|best-fixed|optimum|best-fixed-lat|optimum-lat),' \
        --weights 3
    # ... the waits with a timeout of 0 that the fd monitor's wait() ran
    # in, although the trace did not see need_wait(): not counted either
    priced_case "$out" priced-waitran 2000 2000 ',new-w3,'
    # ... --timeout0-rule: the waits whose timeout was 0 left out too
    priced_case "$out" priced-timeout0 2000 2000 ',new-w3,' --timeout0-rule
    # ... --cut-rule: the waits whose polling ended early without progress
    # left out; --pending-rule: every wait that neither slept nor ended by
    # polling left out
    priced_case "$out" priced-pending 2000 2000 ',new-w3,' --weights 3
    priced_case "$out" priced-pending@cut 2000 2000 ',new-w3,' --weights 3 \
        --cut-rule
    priced_case "$out" priced-pending@pending 2000 2000 ',new-w3,' \
        --weights 3 --pending-rule
    # ... --idle-rule: the waits in which nothing ran while no timer was
    # due left out, and with --notifier those that the notifier alone ended
    priced_case "$out" priced-idle 2000 2000 ',new-w3,' --weights 3
    priced_case "$out" priced-idle@idle 2000 2000 ',new-w3,' --weights 3 \
        --idle-rule
    priced_case "$out" priced-idle@notifier 2000 2000 ',new-w3,' \
        --weights 3 --idle-rule --notifier 1
    # ... and --notifier auto finds handler 1 there
    priced_case "$out" priced-idle@auto 2000 2000 ',new-w3,' \
        --weights 3 --idle-rule --notifier auto
    # ... --clairvoyant: the best fixed time per class of waits, where the
    # previous wait tells what the next will be and no one time pays
    priced_case "$out" priced-context 10000 2000 \
        ',(new-w3|best-fixed|optimum|clairvoyant-[a-z0-9-]*),' \
        --weights 3 --clairvoyant
    # ... and its stretches of 1000 waits, where the first and the second
    # thousand want different times
    priced_case "$out" priced-window 10000 2000 \
        ',(best-fixed|optimum|clairvoyant-window[a-z0-9-]*),' \
        --weights 3 --clairvoyant
    # ... --edges-only: the best fixed times among the histogram's bin
    # edges only, where the best arrival lies between two
    priced_case "$out" priced-edges 10000 2000 \
        ',(best-fixed|optimum|clairvoyant-since-long),' \
        --weights 3 --clairvoyant
    priced_case "$out" priced-edges@edges 10000 2000 \
        ',(best-fixed|optimum|clairvoyant-since-long),' \
        --weights 3 --clairvoyant --edges-only
    # ... --context-rule: the policy of patches 9-13 with a histogram per
    # position after the last long wait learns it online
    priced_case "$out" priced-context@rule 10000 2000 ',new-w3,' \
        --weights 3 --context-rule 4
    # ... --policy-sees-arrivals: the policy told when the events of its
    # slept waits came
    priced_case "$out" priced-sees 10000 2000 ',new-w3,' --weights 3
    priced_case "$out" priced-sees@arrivals 10000 2000 ',new-w3,' \
        --weights 3 --policy-sees-arrivals
    # ... --len-clamp: an fd event found ready after polling counts as
    # ending within the polling time, and the policy stops alternating
    # between polling and sleeping for it
    priced_case "$out" priced-fdclamp 16384 2000 ',new-w3,' \
        --weights 3 --poll-entry 1000 --policy-wakeup-cpu 16384
    priced_case "$out" priced-fdclamp@clamp 16384 2000 ',new-w3,' \
        --weights 3 --poll-entry 1000 --policy-wakeup-cpu 16384 --len-clamp
    # ... --explore: every other wait of the class sleeps, and only those
    # are counted: the rule's time no longer depends on its own polling
    priced_case "$out" priced-fdclamp@explore 16384 2000 ',new-w3,' \
        --weights 3 --poll-entry 1000 --policy-wakeup-cpu 16384 \
        --context-rule 1 --explore 2
    # ... --fd-polled: the fd's events as if it had io_poll(): polling
    # catches them, and the policy learns when they came
    priced_case "$out" priced-fdclamp@polled 16384 2000 \
        ',(new-w3|best-fixed|optimum),' \
        --weights 3 --poll-entry 1000 --policy-wakeup-cpu 16384 --fd-polled
    # ... --bandit: each time played in turn, then the one seen cheapest,
    # every fourth wait exploring the others; no event times needed
    priced_case "$out" priced-fdclamp@bandit 16384 2000 ',new-w3,' \
        --weights 3 --poll-entry 500 --policy-wakeup-cpu 16384 \
        --policy-wakeup-latency 2000 --context-rule 1 --bandit 4 \
        --bandit-max 16384
    # ... --bandit-near: exploring only the times whose cost is near the
    # cheapest's, here none but the cheapest itself
    priced_case "$out" priced-fdclamp@near 16384 2000 ',new-w3,' \
        --weights 3 --poll-entry 500 --policy-wakeup-cpu 16384 \
        --policy-wakeup-latency 2000 --context-rule 1 --bandit 4 \
        --bandit-max 16384 --bandit-near 150
    # ... --bandit-wakeup-cpu: the rule's own price of a wakeup, here so
    # cheap that sleeping is its cheapest time
    priced_case "$out" priced-fdclamp@cheap 16384 2000 ',new-w3,' \
        --weights 3 --poll-entry 500 --policy-wakeup-cpu 16384 \
        --policy-wakeup-latency 2000 --context-rule 1 --bandit 4 \
        --bandit-max 16384 --bandit-wakeup-cpu 4000
    # ... --bandit-hybrid: the rule only where an fd without io_poll()
    # ends most waits of a position, the policy's histogram elsewhere
    priced_case "$out" priced-hybrid@bandit 16384 2000 ',new-w3,' \
        --weights 3 --poll-entry 500 --policy-wakeup-latency 2000 \
        --context-rule 3 --bandit 4 --bandit-max 16384 --bandit-hybrid \
        --bandit-wakeup-cpu 16384
    # ... --bandit-count-all: that histogram counts the fd's waits too
    priced_case "$out" priced-hybrid@all 16384 2000 ',new-w3,' \
        --weights 3 --poll-entry 500 --policy-wakeup-latency 2000 \
        --context-rule 3 --bandit 4 --bandit-max 16384 --bandit-hybrid \
        --bandit-wakeup-cpu 16384 --bandit-count-all
    # ... --class-report: per position after the last long wait, the
    # online rule beside the best fixed time for the same waits, and the
    # rule learnt on the first half applied to the second (stderr)
    for t in priced-context priced-learn; do
        (cd "$REPLAY_DIR" && "$out/aio-poll-replay" --priced --weights 3 \
            --wakeup-cpu 10000 --wakeup-latency 2000 --context-rule 4 \
            --class-report "tests/$t.trace" 2> "$out/report.txt" \
            > /dev/null) &&
            diff -u "$REPLAY_DIR/tests/$t@report.expected" \
                "$out/report.txt" ||
            die "replay: --class-report of tests/$t.trace no" \
                "longer gives tests/$t@report.expected"
    done
    # ... and each refused without the option it needs (--context-rule,
    # --bandit, --bandit-hybrid), with nothing written
    for o in "--explore 4" --class-report "--bandit 4" \
            "--context-rule 2 --bandit-hybrid" \
            "--context-rule 2 --bandit 4 --bandit-count-all"; do
        # shellcheck disable=SC2086  # $o is an option and its value
        if (cd "$REPLAY_DIR" && "$out/aio-poll-replay" --priced $o \
            tests/priced-context.trace > "$out/refused.csv" \
            2> "$out/refused.err"); then
            die "replay: $o, without the option it needs, was not refused"
        fi
        grep -qF "needs" "$out/refused.err" && [ ! -s "$out/refused.csv" ] ||
            die "replay: $o was refused without saying what it needs:" \
                "$(cat "$out/refused.err")"
    done
    # ... 10.2.2's handlers before their first event in a trace: idle ones
    priced_case "$out" priced-idlestart 3000 2000 ',unpatched,' --weights 3
    # ... and the idle ones leaving the poll list in the middle of a trace
    priced_case "$out" priced-idlestep 3000 2000 ',unpatched,' --weights 3
    # ... the waits in which the recorded run was held past its polling
    # time (stalls): charged to a policy that polls at least as long
    priced_case "$out" priced-stall 2000 2000 \
        ',(new-w3|never-poll|poll-to-max|best-fixed|optimum),'
    # ... the events that the recorded run caught after its polling time:
    # caught by a policy that polls at least as long, too
    priced_case "$out" priced-heldcatch 2000 2000 \
        ',(series-w3|new-w3|never-poll|poll-to-max),'
    # ... a wait that the recorded run slept for: a policy that sleeps too
    # sees the recorded wait
    priced_case "$out" priced-sleptwait 2000 28000 \
        ',(unpatched|series-w3),' --weights 3
    # ... an fd event that the recorded run slept for, though its wait
    # returned sooner than the price's latency: it came after polling ended
    priced_case "$out" priced-fdslept 2000 5000 \
        ',(never-poll|poll-to-max|optimum),'
    # ... an event that the recorded run slept for, though its wait returned
    # sooner than the price's latency: after the recorded polling time as
    # the replay prices it too (500 ns of entering and leaving poll mode)
    priced_case "$out" priced-afterrec 2000 5000 \
        ',(never-poll|poll-to-max|best-fixed|optimum),' --poll-entry 500
    # ... a negative cost of entering and leaving poll mode (the checks
    # before polling, inside the polling time, cost more): less CPU for
    # the same polling, which still ends at the polling time
    priced_case "$out" priced-negentry 10000 2000 \
        ',(never-poll|poll-to-max),' --poll-entry -300
    # ... the kernel's wakeup of a slept wait (arrive_ns) places its event
    priced_case "$out" priced-arrive 4000 5000 \
        ',(never-poll|poll-to-max|best-fixed|optimum),' --poll-entry 0
    # ... and refuses one outside the slept wait, or on a wait that did
    # not sleep
    refused_case "$out" "i 20000 p 1 0 0 -1 0 0 25000" \
        "arrive_ns 25000 outside the slept wait (0 to 20000 ns)"
    refused_case "$out" "i 20000 p 1 0 5000 -1 0 0 3000" \
        "arrive_ns 3000 outside the slept wait (5000 to 20000 ns)"
    refused_case "$out" "i 20000 p 0 0 0 -1 0 0 3000" \
        "arrive_ns 3000 for a wait that did not sleep"
    # ... --policy-wakeup-cpu: the policy of patches 9-13 with another price
    # of a wakeup than the tree's constant (not a patch of the series)
    priced_case "$out" priced-policywakeup 20000 10000 ',new-w3,' \
        --weights 3 --policy-wakeup-cpu 20000
    # ... and --policy-wakeup-latency
    priced_case "$out" priced-policywakeup@latency 20000 10000 ',new-w3,' \
        --weights 3 --policy-wakeup-latency 20000

    # The model of 10.2.2 must reproduce recorded unpatched runs exactly
    local checks=()
    for t in "$REPLAY_DIR"/traces/*.modelcheck; do
        [ -f "$t" ] && checks+=(--model-check "traces/${t##*/}")
    done
    if [ ${#checks[@]} = 0 ]; then
        echo "skipped: no traces/*.modelcheck" >"$out/model-check.log"
    elif ! grep -q '"model-check"' "$src"; then
        say "skipping the model check: $src has no --model-check"
        echo "skipped: $src has no --model-check" >"$out/model-check.log"
    else
        say "checking the model of 10.2.2 against recorded runs"
        if ! (cd "$REPLAY_DIR" && "$out/aio-poll-replay" "${checks[@]}") \
                >"$out/model-check.log" 2>&1; then
            cat "$out/model-check.log"
            die "replay: the model check failed ($out/model-check.log)"
        fi
        cat "$out/model-check.log"
    fi
    # The summary table of the report
    sed -n '/^| trace |/,/^$/p' "$out/report.md"
    say "wrote $out/report.md, results.csv, frontier.csv, poll-replay.png," \
        "check.log, model-check.log"
}
