#!/usr/bin/python3
"""Side-by-side table of one benchmark run that measured several bases.

./apw bench-bases runs, in one interleaved run, the variants unpatched, w3
and floor of every base; the variants of a base other than the first carry
its name as a suffix ("w3-10.0.13").  This script reads samples.csv of that
run and writes, per base, the ratios that the project's targets name:

  - IOThread CPU per I/O (schedstat, stats.IO_CPU) of unpatched and of the
    series against the floor
    (poll-max-ns=0) of the same base;
  - IOPS and mean latency of the series against unpatched of the same base;
  - latency of unpatched and of the series against the floor (the gain
    that polling brings, and how much of it the series keeps).

Each cell is the ratio of the medians over the rounds, followed by the
min-max of the per-round ratios (the variants of one round ran next to each
other, so a per-round ratio compares like with like).

Runs that other processes disturbed are left out as report.py leaves them
out (--keep-disturbed keeps them).  With several RUN_DIRs the rounds of
all runs are pooled: medians over all
of them, per-round ratios within each run.

usage: bases.py RUN_DIR... --bases 10.2.2,10.0.13 [--series w3]
                [--keep-disturbed] [--out FILE]
"""

import argparse
import statistics
from collections import defaultdict

import stats


def load(run_dirs, max_other=stats.OTHER_MAX_PCT):
    """(venue, workload, variant) -> round -> row of the measured rounds of
    the runs, numbered on from one run to the next, disturbed ones left out
    as report.py leaves them out (stats.measured())"""
    rows = defaultdict(dict)
    for r in stats.measured(run_dirs, max_other):
        rows[(r["venue"], r["workload"], r["variant"])][int(r["round"])] = r
    return rows


def ratio(rows, key_a, key_b, field):
    """Median ratio a/b and the min-max of the per-round ratios."""
    a, b = rows.get(key_a, {}), rows.get(key_b, {})
    if not a or not b:
        return None
    med = (statistics.median(float(r[field]) for r in a.values()) /
           statistics.median(float(r[field]) for r in b.values()))
    per = [float(a[n][field]) / float(b[n][field])
           for n in sorted(set(a) & set(b)) if float(b[n][field]) > 0]
    return med, min(per, default=med), max(per, default=med)


def cell(x):
    if x is None:
        return "n/a"
    return f"{x[0]:.2f}x ({x[1]:.2f}-{x[2]:.2f})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run_dirs", nargs="+")
    ap.add_argument("--bases", required=True,
                    help="comma list; the first one's variants have no suffix")
    ap.add_argument("--series", default="w3")
    ap.add_argument("--out")
    ap.add_argument("--keep-disturbed", action="store_true",
                    help="keep the runs that other processes disturbed")
    args = ap.parse_args()
    bases = args.bases.split(",")
    rows = load(args.run_dirs,
                None if args.keep_disturbed else stats.OTHER_MAX_PCT)
    cases = sorted({(v, w) for v, w, _ in rows},
                   key=lambda c: (c[0] != "guest", c[1].endswith("rate"), c))

    def name(variant, base):
        return variant if base == bases[0] else f"{variant}-{base}"

    out = []
    metrics = [
        ("IOThread CPU per I/O, unpatched vs no polling", "unpatched", "floor",
         stats.IO_CPU),
        (f"IOThread CPU per I/O, series ({args.series}) vs no polling",
         args.series, "floor", stats.IO_CPU),
        (f"IOThread CPU per I/O, series ({args.series}) vs unpatched",
         args.series, "unpatched", stats.IO_CPU),
        (f"IOPS, series ({args.series}) vs unpatched", args.series,
         "unpatched", "iops"),
        ("mean latency, unpatched vs no polling", "unpatched", "floor",
         "lat_mean_us"),
        (f"mean latency, series ({args.series}) vs unpatched", args.series,
         "unpatched", "lat_mean_us"),
        (f"mean latency, series ({args.series}) vs no polling", args.series,
         "floor", "lat_mean_us"),
    ]
    out.append("| venue, workload | ratio | " +
               " | ".join(bases) + " |")
    out.append("|---|---|" + "--:|" * len(bases))
    for venue, workload in cases:
        for label, a, b, field in metrics:
            if field == "iops" and workload.endswith("rate"):
                continue  # fixed rate: IOPS say nothing
            if field == "lat_mean_us" and not workload.endswith("rate"):
                continue  # saturating: latency follows IOPS
            cells = [cell(ratio(rows, (venue, workload, name(a, base)),
                                (venue, workload, name(b, base)), field))
                     for base in bases]
            out.append(f"| {venue}, {workload} | {label} | " +
                       " | ".join(cells) + " |")
    text = "\n".join(out) + "\n"
    stats.emit(text, args.out)


if __name__ == "__main__":
    main()
