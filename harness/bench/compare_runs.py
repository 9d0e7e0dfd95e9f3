#!/usr/bin/python3
"""Compare two benchmark runs of the same venues and variants, made under
different conditions (e.g. --pin split and --pin swap): for each venue,
workload and polling variant, its paired ratio to its own floor in each
run (stats.interval over the rounds) and the ratio of the two, with a
95% Welch interval on the difference of the mean logs (the two runs are
not paired with each other, so their rounds are independent samples).

Usage: compare_runs.py RUN_A RUN_B [--metric KEY] [--label-a A]
                       [--label-b B] [--keep-disturbed]

The measured rounds of each run are those bases.load() keeps (not the
warm-up, round 0, nor the runs that other processes disturbed, as
report.py leaves them out).  KEY is a samples.csv column (default iothread_sched_ms_per_kio, the
IOThread's CPU per I/O by schedstat, as report.md's verdicts use).
Prints a Markdown table.
"""

import argparse
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bases  # noqa: E402
import stats  # noqa: E402


def welch(a, b):
    """(ratio, low, high) of the geometric means of the positive ratios
    @a over @b, with a 95% Welch interval; None without two of each"""
    la = [math.log(x) for x in a if x > 0]
    lb = [math.log(x) for x in b if x > 0]
    if len(la) < 2 or len(lb) < 2:
        return None
    va = statistics.variance(la) / len(la)
    vb = statistics.variance(lb) / len(lb)
    d = statistics.mean(la) - statistics.mean(lb)
    se = math.sqrt(va + vb)
    if se == 0:
        return (math.exp(d), math.exp(d), math.exp(d))
    df = (va + vb) ** 2 / (va ** 2 / (len(la) - 1) + vb ** 2 / (len(lb) - 1))
    h = stats.t95(max(1, int(df))) * se
    return (math.exp(d), math.exp(d - h), math.exp(d + h))


def rows(a, b, metric):
    """[(venue, workload, variant, ratios in A, ratios in B)] for every
    variant with an own floor in both runs"""
    out = []
    labels = {k[2] for k in a}
    for key in sorted(a):
        venue, workload, variant = key
        floor = stats.floor_of(variant, labels)
        fkey = (venue, workload, floor)
        if floor is None or fkey not in a or key not in b or fkey not in b:
            continue
        out.append((venue, workload, variant,
                    stats.paired(a[key], a[fkey], metric),
                    stats.paired(b[key], b[fkey], metric)))
    return out


def compare(run_a, run_b, metric, max_other=stats.OTHER_MAX_PCT):
    """rows() of two benchmark folders' measured rounds"""
    return rows(bases.load([run_a], max_other), bases.load([run_b], max_other),
                metric)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("run_a")
    ap.add_argument("run_b")
    ap.add_argument("--metric", default="iothread_sched_ms_per_kio")
    ap.add_argument("--label-a", default="A")
    ap.add_argument("--label-b", default="B")
    ap.add_argument("--keep-disturbed", action="store_true",
                    help="keep the runs that other processes disturbed")
    x = ap.parse_args()
    print("| venue, workload | variant | %s: vs own floor | %s: vs own "
          "floor | %s / %s |\n|---|---|--:|--:|--:|" % (
              x.label_a, x.label_b, x.label_a, x.label_b))
    for venue, workload, variant, ra, rb in compare(
            x.run_a, x.run_b, x.metric,
            None if x.keep_disturbed else stats.OTHER_MAX_PCT):
        w = welch(ra, rb)
        print("| %s, %s | %s | %s | %s | %s |" % (
            venue, workload, variant, stats.fmt(stats.interval(ra), 2),
            stats.fmt(stats.interval(rb), 2),
            "-" if w is None else "%.2f [%.2f, %.2f]" % w))


if __name__ == "__main__":
    main()
