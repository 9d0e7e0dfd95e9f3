#!/usr/bin/python3
"""Upstream 11.1.3's polling policy beside the series', as a black box.

Reads samples.csv of ./apw bench runs and writes, per venue and workload,
each variant's IOThread CPU per I/O (schedstat, stats.IO_CPU: the key of
report.py's verdicts) and blocking wakeups per I/O (the IOThread's
voluntary context switches) against its own build's floor
(poll-max-ns=0), and the series against upstream at the same weight.

Pairs: wN and series (series build) against series-floor, or against
floor (the unpatched build's) where the run has no series-floor; upN and
upstream against upstream-floor; unpatched against floor.  Ratios are
taken within a round (the variants of a round ran next to each other);
the figure is the geometric mean over the rounds with a 95% t interval on
the mean of the log ratios.  An interval that excludes 1 is a difference
that the run can tell; one that includes 1 is not evidence of sameness
beyond its width.

Runs whose window saw other processes take more than
stats.OTHER_MAX_PCT % of a core are left out, as report.py leaves them
out (--keep-disturbed keeps them), so that a figure here and one in
report.md pair the same runs.

usage: policy.py RUN_DIR... [--keep-disturbed] [--out FILE]
"""

import argparse
import os
import re
import statistics
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "bench"))
import stats  # noqa: E402  (the one implementation of the intervals)
from stats import fmt, interval, num  # noqa: E402,F401

METRICS = [(stats.IO_CPU, "IOThread CPU per I/O"),
           ("iothread_vcsw_per_kio", "blocking wakeups per I/O"),
           ("iops", "IOPS")]


def read(run_dirs, max_other=stats.OTHER_MAX_PCT):
    """((venue, workload) -> variant -> round -> row, how many were left
    out): the measured rounds of the runs, numbered on from one run to the
    next, the disturbed ones left out as report.py leaves them out
    (stats.measured() and stats.disturbed()), samples.csv read once"""
    rows = defaultdict(lambda: defaultdict(dict))
    left_out = 0
    for r in stats.measured(run_dirs, None):
        if stats.disturbed(r, max_other):
            left_out += 1
            continue
        rows[(r["venue"], r["workload"])][r["variant"]][int(r["round"])] = r
    return rows, left_out


floor_of = stats.floor_of
ratios = stats.paired
ratio_of_ratios = stats.paired_of_ratios


def median(vs, key):
    xs = [num(r, key) for r in vs.values()]
    xs = [x for x in xs if x == x]
    return statistics.median(xs) if xs else float("nan")


def report(rows, left_out=0):
    """The tables of load()'s @rows; @left_out runs were disturbed"""
    out = ["# Upstream 11.1.3 beside the series: the policy as a black box", "",
           "Ratios within a round, geometric mean over rounds [95% t interval].",
           "CPU is the IOThread's schedstat run time (as in report.md's "
           "verdicts) and wakeups are its voluntary context switches, both "
           "per 1000 I/Os."]
    if left_out:
        out.append("%d measured runs left out: other processes took more "
                   "than %d%% of a core during their window (as report.md "
                   "leaves them out)." % (left_out, stats.OTHER_MAX_PCT))
    out.append("")
    for (venue, wl), by_var in sorted(rows.items()):
        labels = list(by_var)
        order = sorted(labels, key=lambda l: (
            0 if l in ("unpatched", "floor") else
            1 if l.startswith("w") or l.startswith("series") else 2, l))
        out += ["## %s, %s" % (venue, wl), "",
                "| variant | rounds | IOThread CPU ms/1k I/O | wakeups/1k I/O | IOPS "
                "| CPU vs own floor | wakeups vs own floor | IOPS vs own floor |",
                "|---|--:|--:|--:|--:|--:|--:|--:|"]
        for l in order:
            v = by_var[l]
            f = floor_of(l, labels)
            cells = [l, str(len(v))] + ["%.1f" % median(v, k) for k, _ in METRICS]
            for k, _ in METRICS:
                cells.append(fmt(interval(ratios(v, by_var[f], k)))
                             if f in by_var else "-")
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
        pairs = []
        for l in labels:
            m = re.fullmatch(r"w(\d+)", l)
            if m and "up" + m.group(1) in by_var:
                pairs.append((l, "up" + m.group(1)))
        if "w3" in by_var and "upstream" in by_var and ("w3", "up3") not in pairs:
            pairs.append(("w3", "upstream"))
        if pairs:
            out += ["Series against upstream at the same weight, each over its own "
                    "floor: (series/series floor) / (upstream/upstream floor).", "",
                    "| pair | CPU | wakeups | IOPS |", "|---|--:|--:|--:|"]
            for a, b in sorted(pairs):
                fa, fb = floor_of(a, labels), floor_of(b, labels)
                if fa not in by_var or fb not in by_var:
                    continue
                cells = ["%s / %s" % (a, b)] + [fmt(interval(ratio_of_ratios(
                    by_var[a], by_var[fa], by_var[b], by_var[fb], k))) for k, _ in METRICS]
                out.append("| " + " | ".join(cells) + " |")
            out.append("")
        if "series-floor" in by_var and "upstream-floor" in by_var:
            out += ["Floors against each other (series-floor / upstream-floor): "
                    "CPU %s, wakeups %s, IOPS %s." % tuple(
                        fmt(interval(ratios(by_var["series-floor"], by_var["upstream-floor"], k)))
                        for k, _ in METRICS), ""]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--out")
    ap.add_argument("--keep-disturbed", action="store_true",
                    help="keep the runs that other processes disturbed")
    a = ap.parse_args()
    max_other = None if a.keep_disturbed else stats.OTHER_MAX_PCT
    text = report(*read(a.runs, max_other))
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
