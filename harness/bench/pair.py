#!/usr/bin/python3
"""Two variants of one benchmark run against each other, round by round.

report.md pairs each variant with its own build's floor and with
unpatched; a run that holds two builds of the series (a patch and the
patches before it, e.g. --variant p15=DIR:poll-weight=3 beside w3) also
asks how the one compares with the other.  Per venue and workload, and
per metric (IOThread CPU per I/O by schedstat, wakeups per I/O, IOPS,
mean latency): the geometric mean of the per-round ratios A/B with its
95% t interval (stats.interval), as report.md computes its own, over
the rounds that both ran and that report.py keeps (not the warm-up, nor
the runs that other processes disturbed).

With --pool DIR (repeatable), the rounds of further runs of the same
variants are pooled with RUN_DIR's, numbered on from one run to the
next (bases.load()), as a run repeated to resolve a ratio is judged.

With --threads, also the CPU per I/O of the guest's vCPU, of the thread
pool's workers, of the main loop and of the whole process, and the write
system calls per I/O of the vCPU, the workers and the IOThread, and the
vCPU's involuntary context switches per I/O (run.py's thread groups; runs
made before 2026-12-07 do not have them all: n/a).

usage: pair.py RUN_DIR A B [--pool DIR]... [--keep-disturbed] [--threads]
               [--out FILE]
"""

import argparse
import sys

import bases
import stats

METRICS = [(stats.IO_CPU, "IOThread CPU per I/O"),
           ("iothread_vcsw_per_kio", "wakeups per I/O"),
           ("iops", "IOPS"),
           ("lat_mean_us", "mean latency")]
THREADS = [("vcpu_cpu_ms_per_kio", "vCPU CPU per I/O"),
           ("worker_cpu_ms_per_kio", "workers' CPU per I/O"),
           ("main_cpu_ms_per_kio", "main loop CPU per I/O"),
           ("qemu_cpu_ms_per_kio", "QEMU CPU per I/O"),
           ("vcpu_writes_per_kio", "vCPU writes per I/O"),
           ("worker_writes_per_kio", "workers' writes per I/O"),
           ("io_writes_per_kio", "IOThread writes per I/O"),
           ("vcpu_nvcsw_per_kio", "vCPU preempted per I/O")]


def pair(rows, a, b, metrics=METRICS):
    """[(venue, workload, [(metric label, stats.interval of a/b or None)])]
    for every venue and workload where both variants ran"""
    out = []
    for venue, workload in sorted({(v, w) for v, w, _ in rows}):
        ra = rows.get((venue, workload, a), {})
        rb = rows.get((venue, workload, b), {})
        if not set(ra) & set(rb):
            continue
        cells = [(label, stats.interval(stats.paired(ra, rb, key)))
                 for key, label in metrics]
        out.append((venue, workload, cells))
    return out


def table(pairs, a, b):
    """The Markdown table of pair()'s result"""
    labels = [label for label, _ in pairs[0][2]] if pairs else []
    lines = ["%s over %s, paired per round, geometric mean [95%% t "
             "interval] (rounds)" % (a, b), "",
             "| venue, workload | %s |" % " | ".join(labels),
             "|---|%s" % ("--:|" * len(labels))]
    for venue, workload, cells in pairs:
        lines.append("| %s, %s | %s |" % (venue, workload, " | ".join(
            "n/a" if iv is None else
            "%s (%d)" % (stats.fmt(iv, 2), iv[3]) for _, iv in cells)))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("run_dir")
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--pool", action="append", default=[], metavar="DIR",
                    help="pool the rounds of this run too (repeatable)")
    ap.add_argument("--keep-disturbed", action="store_true")
    ap.add_argument("--threads", action="store_true",
                    help="also the CPU per I/O of the thread groups")
    ap.add_argument("--out")
    a = ap.parse_args()
    rows = bases.load([a.run_dir] + a.pool, None if a.keep_disturbed
                      else stats.OTHER_MAX_PCT)
    pairs = pair(rows, a.a, a.b, METRICS + (THREADS if a.threads else []))
    if not pairs:
        sys.exit("pair.py: %s and %s never ran in the same round of %s"
                 % (a.a, a.b, a.run_dir))
    text = table(pairs, a.a, a.b)
    stats.emit(text, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
