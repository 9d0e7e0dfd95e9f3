# ./apw main: the main job.  ./apw demo: the knob over QMP.  Sourced by ./apw.

cmd_demo() {
    local q=$BW/series/build-all/qemu-system-x86_64
    [ -x "$q" ] || die "no series build: run './apw build all' first"
    /usr/bin/python3 "$APW_ROOT/harness/demo/qmp_demo.py" "$q"
}

# Build the base and the series, show the knob, run the short benchmark.
# With options, they go to ./apw bench instead of the short defaults:
# ./apw main --runs 3 (the full default benchmark), --full-matrix, ...
MAIN_BENCH_DEFAULTS="--runs 3 --runtime 5 --variants unpatched,w1,w2,w3,floor"

cmd_main() {
    cmd_deps
    cmd_fetch
    cmd_tree
    say "building the unpatched base"
    cmd_build --unpatched all
    say "building the series"
    cmd_build all
    say "the poll-weight knob over QMP"
    cmd_demo
    say "benchmark: unpatched vs series vs no polling"
    if [ $# = 0 ]; then
        set -- $MAIN_BENCH_DEFAULTS
    fi
    cmd_bench "$@"
}

cmd_help() {
    cat <<'HELP'
usage: ./apw [--base BASE] COMMAND [ARGS]

BASE is the QEMU version the series is applied to: 10.2.2 (the default)
or 10.0.13, or all for each in turn (test then sums the closing lines).
Each base has its series in patches/BASE and its folder work/BASE.

  main [BENCH-OPTS]   the main job: build base and series, demo, benchmark
  test                every test; ends with "N passed, N failed"
  deps | fetch        Debian packages | the source tarball (sha256-checked)
  tree [--force]      create or refresh work/BASE/series/src from patches/BASE
  export              write the tree's commits back to patches/BASE
  roundtrip           check that patches/BASE re-exports byte for byte
  build [--unpatched] PROFILE [TARGET...]
                      PROFILE: unit all asan tsan docs clang
  demo                the poll-weight knob over QMP
  debian-stack        the series on Debian's own patch stack (quilt)
  upstream            QEMU 11.1.3 from trixie-backports, run from the cache
  bench [--help]      the fio benchmark, unpatched vs series vs no polling
  bench-bases [OPTS]  unpatched, w3 and no polling of every base in one run,
                      and the side-by-side table (OPTS go to bench)
  callgrind           instructions per aio_poll(), base against series
  loopbench           the event loop on the wall clock, without a guest:
                      CPU, wakeups and latency per event of each policy
  replay              exact trace replay against an offline oracle
  evidence [--save]   the price of a wakeup, complete traces of real runs,
                      the priced replay and its validation against them
HELP
}
