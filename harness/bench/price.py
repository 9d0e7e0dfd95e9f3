#!/usr/bin/env python3
"""The price of a blocking wakeup that the measured-price patch logs.

The patch (aio-posix: measure the price of a blocking wakeup) was tried as
patch 16 and left out of the series; it is kept, with its results, in
results/bench-multidisk/long-p16-intel/.

usage: price.py BENCHDIR [--wakeup-cost CSV] [--out FILE]

BENCHDIR is a ./apw bench folder run with --trace-events poll_wakeup_price:
each run's raw/RUN/trace.log holds one line per new price,
"poll_wakeup_price ctx PTR ns N".  Per run and AioContext it reports how
many prices came, their median after the first SKIP (the first ones start
from the compiled 8 us and settle) and their 10th and 90th percentiles.
With --wakeup-cost, the waiter's share of a wakeup that
harness/wakeup/wakeup_cost.c measured (io_uring: waiter CPU of a wait
that slept less that of a wait that was ready, medians), which is what
the patch estimates, and each median's ratio to it.
"""
import argparse
import csv
import glob
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "replay"))
from complete import percentile  # noqa: E402  (iteration traces' quantile)
import stats  # noqa: E402

SKIP = 10


def prices(path):
    """{ctx: [ns, ...]} of the poll_wakeup_price lines of @path, in order"""
    by = {}
    with open(path) as f:
        for line in f:
            if "poll_wakeup_price" not in line:
                continue
            w = line.split()
            try:
                ctx = w[w.index("ctx") + 1]
                ns = int(w[w.index("ns") + 1])
            except (ValueError, IndexError):
                continue
            by.setdefault(ctx, []).append(ns)
    return by


def summary(ns):
    """(count, median, p10, p90) of @ns after its first SKIP, or of all
    of them if there are no more"""
    v = ns[SKIP:] or ns
    return (len(ns), statistics.median(v), percentile(v, 0.1),
            percentile(v, 0.9))


def waiter_share(path, backend="io_uring"):
    """wakeup_cost.c's waiter CPU of sleep less ready, medians, @backend"""
    rows = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            if r.get("kind") in ("sleep", "ready") and r["backend"] == backend:
                rows[r["kind"]] = int(r["waiter_cpu_median_ns"])
    return rows["sleep"] - rows["ready"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("bench")
    ap.add_argument("--wakeup-cost")
    ap.add_argument("--out")
    a = ap.parse_args()
    share = waiter_share(a.wakeup_cost) if a.wakeup_cost else None
    lines = ["| run | AioContext | prices | median after the first %d (ns) "
             "| p10 | p90 |%s" % (SKIP, " x waiter share |" if share else ""),
             "|---|---|--:|--:|--:|--:|%s" % ("--:|" if share else "")]
    runs = sorted(glob.glob(os.path.join(a.bench, "raw", "*", "trace.log")))
    if not runs:
        sys.exit("price.py: no raw/*/trace.log in %s" % a.bench)
    for path in runs:
        run = os.path.basename(os.path.dirname(path))
        for ctx, ns in sorted(prices(path).items()):
            n, med, p10, p90 = summary(ns)
            lines.append("| %s | %s | %d | %d | %d | %d |%s"
                         % (run, ctx, n, med, p10, p90,
                            " %.2f |" % (med / share) if share else ""))
    if share:
        lines.append("\nwakeup_cost's waiter share (io_uring, medians): "
                     "%d ns" % share)
    text = "\n".join(lines) + "\n"
    stats.emit(text, a.out)


if __name__ == "__main__":
    main()
