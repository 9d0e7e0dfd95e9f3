#!/usr/bin/python3
"""Upstream 11.1.3's polling policy beside the series', as a black box.

Reads samples.csv of ./apw bench runs and writes, per venue and workload,
each variant's IOThread CPU per I/O and blocking wakeups per I/O (the
IOThread's voluntary context switches) against its own build's floor
(poll-max-ns=0), and the series against upstream at the same weight.

Pairs: wN and series (series build) against series-floor, or against
floor (the unpatched build's) where the run has no series-floor; upN and
upstream against upstream-floor; unpatched against floor.  Ratios are
taken within a round (the variants of a round ran next to each other);
the figure is the geometric mean over the rounds with a 95% t interval on
the mean of the log ratios.  An interval that excludes 1 is a difference
that the run can tell; one that includes 1 is not evidence of sameness
beyond its width.

usage: policy.py RUN_DIR... [--out FILE]
"""

import argparse
import csv
import math
import re
import statistics
import sys
from collections import defaultdict

# two-sided 95% t quantiles by degrees of freedom
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447,
       7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179,
       13: 2.160, 14: 2.145, 15: 2.131, 20: 2.086, 30: 2.042}

METRICS = [("iothread_cpu_ms_per_kio", "IOThread CPU per I/O"),
           ("iothread_vcsw_per_kio", "blocking wakeups per I/O"),
           ("iops", "IOPS")]


def t95(df):
    if df in T95:
        return T95[df]
    return T95[max(k for k in T95 if k <= df)] if df > 1 else T95[1]


def interval(ratios):
    """(geometric mean, low, high, n) of a list of positive ratios."""
    logs = [math.log(r) for r in ratios if r > 0]
    n = len(logs)
    if n == 0:
        return None
    m = statistics.mean(logs)
    if n < 2:
        return (math.exp(m), None, None, n)
    h = t95(n - 1) * statistics.stdev(logs) / math.sqrt(n)
    return (math.exp(m), math.exp(m - h), math.exp(m + h), n)


def fmt(iv):
    if iv is None:
        return "-"
    g, lo, hi, n = iv
    if lo is None:
        return "%.3f (n=1)" % g
    return "%.3f [%.3f, %.3f]" % (g, lo, hi)


def load(run_dirs):
    # (venue, workload) -> variant -> (run, round) -> row
    rows = defaultdict(lambda: defaultdict(dict))
    for run, d in enumerate(run_dirs):
        with open(d + "/samples.csv", newline="") as f:
            for r in csv.DictReader(f):
                if r["status"] != "ok" or int(r["round"]) <= 0:
                    continue
                rows[(r["venue"], r["workload"])][r["variant"]][(run, int(r["round"]))] = r
    return rows


def floor_of(label, labels):
    if label in ("unpatched",):
        return "floor"
    if label == "upstream" or re.fullmatch(r"up\d+", label):
        return "upstream-floor"
    if label == "series" or re.fullmatch(r"w\d+", label):
        return "series-floor" if "series-floor" in labels else "floor"
    return None


def num(r, k):
    try:
        return float(r.get(k) or "nan")
    except ValueError:
        return float("nan")


def ratios(a, b, key):
    """Per-round ratios a/b of metric key over the rounds both have."""
    out = []
    for rnd in sorted(set(a) & set(b)):
        x, y = num(a[rnd], key), num(b[rnd], key)
        if x > 0 and y > 0:
            out.append(x / y)
    return out


def ratio_of_ratios(a, fa, b, fb, key):
    out = []
    for rnd in sorted(set(a) & set(fa) & set(b) & set(fb)):
        v = [num(x[rnd], key) for x in (a, fa, b, fb)]
        if all(x > 0 for x in v):
            out.append((v[0] / v[1]) / (v[2] / v[3]))
    return out


def median(vs, key):
    xs = [num(r, key) for r in vs.values()]
    xs = [x for x in xs if x == x]
    return statistics.median(xs) if xs else float("nan")


def report(rows):
    out = ["# Upstream 11.1.3 beside the series: the policy as a black box", "",
           "Ratios within a round, geometric mean over rounds [95% t interval].",
           "CPU and wakeups are per 1000 I/Os; wakeups are the IOThread's "
           "voluntary context switches.", ""]
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
    a = ap.parse_args()
    text = report(load(a.runs))
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
