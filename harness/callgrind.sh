# ./apw callgrind: the adaptive polling policy's own cost per aio_poll() call,
# counted in instructions by callgrind, for the unpatched base and the series.
# Sourced by ./apw.
#
# The project's target: the series' instructions per aio_poll() within 2% of
# the base's.  Instruction counts are stable where wall-clock timings on
# this machine are not.
#
# harness/callgrind/aio_poll_cost.c drives aio_poll() through one scenario;
# harness/callgrind/build.py builds it against a build folder's
# libqemuutil.a with that folder's flags (no ninja: the build folders are
# shared, and must be built already, e.g. by './apw build all').
#
# Each row runs under
#   valgrind --tool=callgrind --toggle-collect=aio_poll
# so that only aio_poll() and what it calls count; the program zeroes the
# counters after its warm-up and dumps them after the measured calls.

# A wait longer than poll-max-ns (32 us by default), so that the policy
# polls for 0 and the thread blocks: the "blocked" cases of both tables.
CG_SLOW_STEP=--step=64000

CG_ROWS=(
    # label | clock (real or fake) | scenario | options
    "nopoll, fdmon-poll|real|nopoll|--fdmon=poll"
    "poll-hit, fdmon-poll, fake clock|fake|poll-hit|--fdmon=poll"
    "poll-miss, fdmon-poll, fake clock|fake|poll-miss|--fdmon=poll"
    "poll-miss slow (step 64us > max), fdmon-poll, fake clock|fake|poll-miss|--fdmon=poll $CG_SLOW_STEP"
    "nopoll, io_uring|real|nopoll|--fdmon=default"
    "poll-hit, io_uring, fake clock|fake|poll-hit|--fdmon=default"
    "poll-miss, io_uring, fake clock|fake|poll-miss|--fdmon=default"
    "poll-hit, fdmon-poll, real clock|real|poll-hit|--fdmon=poll --fd-fallback"
    "poll-miss, fdmon-poll, real clock|real|poll-miss|--fdmon=poll"
)

callgrind_usage() {
    cat <<'EOF'
usage: ./apw callgrind [-n N] [--runs R] [--warmup W] [--only REGEX]
       ./apw callgrind --scaling [-n N] [--warmup W]

Counts the instructions of aio_poll() (and all it calls) per call, with
callgrind, for the base (work/BASE/base/build-all) and the series
(work/BASE/series/build-all), in the scenarios of harness/callgrind/aio_poll_cost.c.
Prints a markdown table and writes it to work/callgrind/report.md; the
callgrind dumps stay in work/callgrind/out/ for callgrind_annotate.

  -n N        measured aio_poll() calls per run (default 20000)
  --runs R    runs of each scenario and build (default 2), to show the spread
  --warmup W  warm-up calls before the measured ones (default 1000)
  --only RE   only the scenarios whose label matches the extended regex RE

--scaling     instructions per aio_poll() against the number of polled
              handlers (1, 16, 256, 1024; all but one never fire again
              after joining the poll list), fake clock, fdmon-poll, for
              three builds: "10.2.2" (the unpatched base), "series" (the
              tree at patch 8, QEMU 11.1's policy) and "new" (the whole
              series).  Scenarios: caught (polling
              catches the event), idle (polling is on but catches nothing:
              the event comes through the fd), blocked (the same with the
              fake clock stepping 64 us per read: every wait is longer
              than poll-max-ns, so the policies poll for 0 and block) and
              nopoll (poll-max-ns=0).
              Writes work/BASE/callgrind/scaling.csv (build,polled_handlers,
              scenario,instructions_per_aio_poll), the format of
              results/callgrind-scaling.csv.  Builds the unit profile of
              the base and of the tree at patch 8 if missing.

Environment: APW_CG_BASE_BUILD, APW_CG_SERIES_BUILD override the build
folders; with --scaling, APW_CG_UPSTREAM_BUILD the one of "series".
Reports; does not fail on the 2% target.
EOF
}

# The tree at patch $APW_UPSTREAM_PATCHES (QEMU 11.1's policy, without the
# series' own policy patches), as a plain tree, and its unit build
CG_UPSTREAM_DIR=
callgrind_upstream_build() {
    local sha src
    CG_UPSTREAM_DIR=$BW/series-upstream
    src=$CG_UPSTREAM_DIR/src
    sha=$(git -C "$TREE" rev-list --reverse base..work |
        sed -n "${APW_UPSTREAM_PATCHES}p")
    [ -n "$sha" ] || die "callgrind: the tree has fewer than $APW_UPSTREAM_PATCHES patches"
    if [ "$(cat "$src/.apw-commit" 2>/dev/null)" != "$sha" ]; then
        rm -rf "$CG_UPSTREAM_DIR"
        mkdir -p "$src"
        git -C "$TREE" archive "$sha" | tar -x -C "$src"
        envfix_apply "$src"
        echo "$sha" > "$src/.apw-commit"
    fi
    build_profile "$src" "$CG_UPSTREAM_DIR/build-unit" unit \
        tests/unit/test-nested-aio-poll >&2
}

# ./apw callgrind --scaling
callgrind_scaling() {
    local n=$1 warmup=$2 dir=$BW/callgrind/scaling csv v k sc args
    local line f ir calls extra
    local -A blds trees
    csv=$BW/callgrind/scaling.csv
    if [ -z "${APW_CG_BASE_BUILD:-}" ]; then
        [ -f "$BW/base/build-unit/libqemuutil.a" ] || cmd_build --unpatched unit >&2
        blds[10.2.2]=$BW/base/build-unit
    else
        blds[10.2.2]=$APW_CG_BASE_BUILD
    fi
    if [ -z "${APW_CG_UPSTREAM_BUILD:-}" ]; then
        callgrind_upstream_build
        blds[series]=$CG_UPSTREAM_DIR/build-unit
        trees[series]=$CG_UPSTREAM_DIR/src
    else
        blds[series]=$APW_CG_UPSTREAM_BUILD
        trees[series]=$TREE
    fi
    if [ -z "${APW_CG_SERIES_BUILD:-}" ]; then
        [ -f "$BW/series/build-unit/libqemuutil.a" ] || cmd_build unit >&2
        blds[new]=$BW/series/build-unit
    else
        blds[new]=$APW_CG_SERIES_BUILD
    fi
    trees[10.2.2]=$BASE_TREE
    trees[new]=$TREE
    rm -rf "$dir"
    mkdir -p "$dir"
    for v in 10.2.2 series new; do
        harness_program "${blds[$v]}" "${trees[$v]}" callgrind/aio_poll_cost.c "$dir/$v"
    done
    ulimit -n 4096 2>/dev/null || true
    echo "build,polled_handlers,scenario,instructions_per_aio_poll" > "$csv.new"
    for v in 10.2.2 series new; do
        for k in 1 16 256 1024; do
            for sc in caught idle blocked nopoll; do
                extra=
                case $sc in
                caught) args=poll-hit ;;
                idle) args=poll-miss ;;
                blocked) args=poll-miss extra=$CG_SLOW_STEP ;;
                nopoll) args=nopoll ;;
                esac
                f=$dir/$v.$sc.$k
                line=$(valgrind --tool=callgrind --toggle-collect=aio_poll \
                    --callgrind-out-file="$f" "$dir/$v/aio_poll_cost-fakeclock" \
                    "$args" "$n" --fdmon=poll --warmup="$warmup" ${extra:+"$extra"} \
                    --idle-handlers=$((k - 1)) 2>"$f.log" | tail -n 1) || true
                echo "   $v $k $sc: ${line:-(no summary, see $f.log)}" >&2
                [ -n "$line" ] && [ "$(cg_field "$line" stalled)" = 0 ] &&
                    [ "$(cg_field "$line" bad)" = 0 ] ||
                    die "callgrind: $v, $k handlers, $sc did not hold: $f.log"
                ir=$(cg_ir "$f.1") || die "callgrind: no dump $f.1"
                calls=$(cg_field "$line" measured)
                echo "$v,$k,$sc,$(awk -v a="$ir" -v b="$calls" \
                    'BEGIN { printf "%.1f", a / b }')" >> "$csv.new"
            done
        done
    done
    mv "$csv.new" "$csv"
    cat "$csv"
    say "wrote $csv"
}

# harness_program BUILD TREE SRC OUTDIR: build the harness program SRC
# (relative to harness/) against BUILD's libqemuutil.a, TREE being BUILD's
# source, into OUTDIR (harness/callgrind/build.py)
harness_program() {
    local name
    name=$(basename "$3" .c)
    callgrind_check_idle "$1"
    say "building $name against $1"
    /usr/bin/python3 "$APW_ROOT/harness/callgrind/build.py" "$1" "$2" \
        "$APW_ROOT/harness/$3" "$4" >/dev/null ||
        die "building $name against $1 failed"
}

# cg_ir DUMP: the total Ir of a callgrind dump
cg_ir() {
    awk '/^totals:/ { print $2; f = 1 } END { if (!f) exit 1 }' "$1"
}

# callgrind_check_idle BUILD: refuse a build folder that ninja is writing
callgrind_check_idle() {
    local pid
    for pid in $(pgrep -x ninja || true); do
        if [ "$(readlink "/proc/$pid/cwd" 2>/dev/null)" = "$(cd "$1" && pwd -P)" ]; then
            die "callgrind: ninja (pid $pid) is running in $1: try again when it is done"
        fi
    done
}

# callgrind_commit TREE: which commit a tree is at, for the report
callgrind_commit() {
    local top
    top=$(git -C "$1" rev-parse --show-toplevel 2>/dev/null) || top=
    if [ "$top" != "$(cd "$1" && pwd -P)" ]; then
        echo "(no git repository of its own)"
        return 0
    fi
    git -C "$1" log -1 --format='%h %s'
    git -C "$1" diff --quiet HEAD || echo " (with uncommitted changes)"
}

cmd_callgrind() {
    local n=20000 runs=2 warmup=1000 only='' dir out report scaling=
    local base_bld=${APW_CG_BASE_BUILD:-$BW/base/build-all}
    local series_bld=${APW_CG_SERIES_BUILD:-$BW/series/build-all}
    while [ $# -gt 0 ]; do
        case "$1" in
        -n) n=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --warmup) warmup=$2; shift 2 ;;
        --only) only=$2; shift 2 ;;
        --scaling) scaling=1; shift ;;
        -h|--help) callgrind_usage; return 0 ;;
        *) die "callgrind: unknown argument '$1' (./apw callgrind --help)" ;;
        esac
    done
    command -v valgrind >/dev/null || die "callgrind: valgrind is not installed"
    command -v callgrind_annotate >/dev/null ||
        die "callgrind: callgrind_annotate is not installed"
    if [ -n "$scaling" ]; then
        callgrind_scaling "$n" "$warmup"
        return
    fi

    dir=$BW/callgrind
    out=$dir/out
    report=$dir/report.md
    rm -rf "$out"
    mkdir -p "$out"

    local v bld tree
    for v in base series; do
        if [ $v = base ]; then bld=$base_bld tree=$BASE_TREE; else bld=$series_bld tree=$TREE; fi
        [ -f "$bld/libqemuutil.a" ] ||
            die "callgrind: no $bld/libqemuutil.a: build it first ('./apw build all')"
        harness_program "$bld" "$tree" callgrind/aio_poll_cost.c "$dir/$v"
    done

    local row label kind scen args i r line ir calls bin f table notes
    table=$(mktemp)
    notes=$(mktemp)
    {
        echo "callgrind, \`--toggle-collect=aio_poll\`: instructions (Ir) per aio_poll() call,"
        echo "$n measured calls after $warmup warm-up calls, $runs runs each."
        echo "base: $base_bld, tree at $(callgrind_commit "$BASE_TREE" | tr -d '\n')."
        echo "series: $series_bld, tree at $(callgrind_commit "$TREE" | tr -d '\n')."
        echo
        echo "| scenario | base Ir/aio_poll | series Ir/aio_poll | ratio | io_poll() per aio_poll, base; series | within 2%? |"
        echo "| --- | ---: | ---: | ---: | ---: | --- |"
    } > "$table"

    i=0
    for row in "${CG_ROWS[@]}"; do
        i=$((i + 1))
        IFS='|' read -r label kind scen args <<< "$row"
        if [ -n "$only" ] && ! [[ $label =~ $only ]]; then
            continue
        fi
        say "scenario $i: $label"
        local -A irs=() iop=() broken=() bad=()
        for v in base series; do
            bin=$dir/$v/aio_poll_cost
            [ "$kind" = fake ] && bin=$bin-fakeclock
            irs[$v]='' broken[$v]=''
            for r in $(seq 1 "$runs"); do
                f=$out/$v.s$i.r$r
                # shellcheck disable=SC2086
                line=$(valgrind --tool=callgrind --toggle-collect=aio_poll \
                    --callgrind-out-file="$f" "$bin" "$scen" "$n" $args \
                    --warmup="$warmup" 2>"$f.log" | tail -n 1) || true
                echo "   $v run $r: ${line:-(no summary, see $f.log)}" >&2
                if [ -z "$line" ]; then
                    broken[$v]="aio_poll_cost failed, see $f.log"
                    continue
                elif [ "$(cg_field "$line" stalled)" = 1 ]; then
                    broken[$v]=$(grep -m1 'aio_poll_cost:' "$f.log" | sed 's/^aio_poll_cost: //')
                    continue
                fi
                bad[$v]=$(( ${bad[$v]:-0} + $(cg_field "$line" bad) ))
                ir=$(cg_ir "$f.1" 2>/dev/null) || { broken[$v]="no callgrind dump"; continue; }
                calls=$(cg_field "$line" measured)
                irs[$v]="${irs[$v]} $(awk -v a="$ir" -v b="$calls" 'BEGIN { printf "%.1f", a / b }')"
                iop[$v]="${iop[$v]:+${iop[$v]}/}$(cg_field "$line" io_poll_per_iter)"
            done
        done
        # mean, spread, ratio, verdict
        awk -v label="$label" -v b="${irs[base]}" -v s="${irs[series]}" \
            -v ib="${iop[base]}" -v is="${iop[series]}" \
            -v bb="${broken[base]}" -v bs="${broken[series]}" \
            -v nbad="$(( ${bad[base]:-0} + ${bad[series]:-0} ))" '
            function stats(list, arr,   k, n, sum, mn, mx) {
                n = split(list, arr, " ")
                for (k = 1; k <= n; k++) {
                    sum += arr[k]
                    if (k == 1 || arr[k] < mn) mn = arr[k]
                    if (k == 1 || arr[k] > mx) mx = arr[k]
                }
                M = n ? sum / n : 0; SP = n && mn > 0 ? (mx - mn) / mn : 0; N = n
                return n
            }
            function cell(list,   arr, n, k, c) {
                n = split(list, arr, " ")
                for (k = 1; k <= n; k++) c = c (k > 1 ? ", " : "") arr[k]
                return c
            }
            BEGIN {
                stats(b); mb = M; sb = SP; nb = N
                stats(s); ms = M; ss = SP; ns = N
                ratio = mb > 0 ? ms / mb : 0
                if (bb != "" || bs != "" || !nb || !ns)
                    verdict = "n/a: scenario did not hold (" (bb != "" ? "base: " bb : "series: " bs) ")"
                else if (nbad > 0)
                    verdict = sprintf("n/a: not stable (%d calls did not go the scenario\x27s way; spread base %.1f%%, series %.1f%%)", nbad, 100 * sb, 100 * ss)
                else if (sb > 0.001 || ss > 0.001)
                    verdict = sprintf("n/a: not stable (spread base %.1f%%, series %.1f%%)", 100 * sb, 100 * ss)
                else if (ratio <= 1.02)
                    verdict = sprintf("yes (%+.2f%%)", 100 * (ratio - 1))
                else
                    verdict = sprintf("**NO (%+.2f%%)**", 100 * (ratio - 1))
                printf "| %s | %s | %s | %.4f | %s; %s | %s |\n", label, cell(b), cell(s), ratio, ib, is, verdict
            }' >> "$table"
        # where the instructions differ, from the first run's dumps
        if [ -z "${broken[base]}${broken[series]}" ] &&
           [ -f "$out/base.s$i.r1.1" ] && [ -f "$out/series.s$i.r1.1" ]; then
            {
                echo
                echo "#### $label: largest per-function differences (self Ir per aio_poll, run 1)"
                echo
                /usr/bin/python3 "$APW_ROOT/harness/callgrind/fndiff.py" \
                    "$out/base.s$i.r1.1" "$n" "$out/series.s$i.r1.1" "$n" 8
            } >> "$notes"
        fi
    done

    {
        cat "$table"
        echo
        echo "Ratio: mean series / mean base.  Scenarios with a fake clock read a clock"
        echo "that advances a fixed step per read, so the policy decides the same way"
        echo "in every run; with the real clock its decisions follow valgrind's speed."
        echo "In poll-miss the two policies may poll for different times (io_poll()"
        echo "calls per aio_poll() differ): there the ratio measures the policy's"
        echo "decisions as much as its bookkeeping."
        cat "$notes"
    } > "$report"
    rm -f "$table" "$notes"
    cat "$report"
    say "report: $report; callgrind dumps: $out (callgrind_annotate FILE.1)"
}
