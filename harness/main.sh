# ./apw main: the main job.  ./apw demo: the knob over QMP.  Sourced by ./apw.

cmd_demo() {
    local q=$APW_WORK/series/build-all/qemu-system-x86_64
    [ -x "$q" ] || die "no series build: run './apw build all' first"
    /usr/bin/python3 "$APW_ROOT/harness/demo/qmp_demo.py" "$q"
}

# Build the base and the series, show the knob, run the short benchmark.
# Options are passed on to ./apw bench (e.g. --full-matrix).
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
    cmd_bench "$@"
}
