# Exact replay of aio_poll() traces against the offline oracle:
# ./apw replay [OPTIONS]; ./apw replay --help.  Sourced by ./apw.
# The tool is tests/bench/aio-poll-replay.c (proposed for the series);
# the helpers are Python 3 under harness/replay/.

REPLAY_PY=/usr/bin/python3
REPLAY_DIR=$APW_ROOT/harness/replay
REPLAY_SYNTH="synth:fixed synth:bimodal synth:poisson synth:onoff"

replay_usage() {
    cat <<EOF
usage: ./apw replay [OPTIONS]

Builds tests/bench/aio-poll-replay against the series build (gcc with the
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
  aio-polling-replay.svg  the same plot as a small SVG, byte-identical on
                  every run: docs/devel/aio-polling-replay.svg of patch 9
  check.log       the pinned-figure check (aio-poll-replay --check)
  model-check.log the model of unpatched 10.2.2 against recorded real runs
                  (aio-poll-replay --model-check harness/replay/traces/
                  *.modelcheck; see harness/replay/README.md)
The figures are exact: the same on every run and machine.  Fails if a
check fails.  A few seconds.

Options:
  --build DIR   series build folder (default work/BASE/series/build-all)
  --src FILE    the tool's source (default: the series tree's
                tests/bench/aio-poll-replay.c, added by patch 9)
  --out DIR     output folder (default work/BASE/replay)
  -h, --help    this text

Recording a trace from a real run: harness/replay/record.py --help.
EOF
}

# The tool's source: tests/bench/aio-poll-replay.c of the series tree
replay_source() {
    [ -d "$TREE/.git" ] || cmd_tree >&2
    [ -f "$TREE/tests/bench/aio-poll-replay.c" ] ||
        die "no tests/bench/aio-poll-replay.c in $TREE"
    echo "$TREE/tests/bench/aio-poll-replay.c"
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
    [ -n "$src" ] || src=$(replay_source)
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
        "$out/frontier.csv" "$out/poll-replay.png" \
        "$out/aio-polling-replay.svg" || die "replay: the plot failed"

    say "checking the pinned figures"
    if ! "$out/aio-poll-replay" --check >"$out/check.log" 2>&1; then
        cat "$out/check.log"
        die "replay: the pinned-figure check failed ($out/check.log)"
    fi
    tail -n 1 "$out/check.log"

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
    # The figure of docs/devel/aio-polling.rst must be this run's
    local svg=$TREE/docs/devel/aio-polling-replay.svg
    if [ -f "$svg" ] && ! cmp -s "$svg" "$out/aio-polling-replay.svg"; then
        say "note: $svg differs from $out/aio-polling-replay.svg:" \
            "copy it there and amend patch 9"
    fi
    # The summary table of the report
    sed -n '/^| trace |/,/^$/p' "$out/report.md"
    say "wrote $out/report.md, results.csv, frontier.csv, poll-replay.png," \
        "aio-polling-replay.svg, check.log, model-check.log"
}
