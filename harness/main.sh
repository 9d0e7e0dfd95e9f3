# ./apw main: the main job.  ./apw demo: the knob over QMP.  Sourced by ./apw.

cmd_demo() {
    local q=$APW_WORK/series/build-all/qemu-system-x86_64
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
    cmd_build --base all
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
usage: ./apw COMMAND [ARGS]   (APW_BASE selects the base, default 10.2.2)

  main [BENCH-OPTS]   the main job: build base and series, demo, benchmark
  test                every test; ends with "N passed, N failed"
  deps | fetch        Debian packages | the source tarball (sha256-checked)
  tree [--force]      create or refresh work/series/src from patches/
  export              write the tree's commits back to patches/
  roundtrip           check that patches/ re-exports byte for byte
  build [--base] PROFILE [TARGET...]   PROFILE: unit all asan tsan
  demo                the poll-weight knob over QMP
  bench [--help]      the fio benchmark, unpatched vs series vs no polling
  callgrind           instructions per aio_poll(), base against series
  replay              exact trace replay against an offline oracle
HELP
}
