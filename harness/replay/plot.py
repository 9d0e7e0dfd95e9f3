#!/usr/bin/python3
"""Plot aio-poll-replay results: polling time against caught events.

One panel per trace, one point per policy (unpatched 10.2.2 and the
series at each poll-weight), and the oracle's frontier: the least polling
time that catches a given number of events.  Points can only lie on or
above it, and not to the right of the oracle's point.

Usage: plot.py RESULTS_CSV FRONTIER_CSV OUTPUT_PNG

The inputs are what `aio-poll-replay --csv --frontier` writes.  Needs
Debian's python3-matplotlib (run it with /usr/bin/python3).  The PNG
carries no version or date, so equal inputs give an identical file.
"""

import csv
import math
import sys

import matplotlib
matplotlib.use("Agg")
matplotlib.rcParams["font.sans-serif"] = ["DejaVu Sans"]
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    results_csv, frontier_csv, out = sys.argv[1:4]

    results = {}
    with open(results_csv) as f:
        for row in csv.DictReader(f):
            results.setdefault(row["trace"], []).append(row)
    frontier = {}
    with open(frontier_csv) as f:
        for row in csv.DictReader(f):
            frontier.setdefault(row["trace"], []).append(
                (int(row["caught"]), int(row["polled_ns"]) / 1e6))

    # The frontier at each policy's own number of catches, exactly
    for name, rows_ in results.items():
        pts = frontier.setdefault(name, [])
        pts += [(int(r["caught"]), int(r["frontier_ns"]) / 1e6)
                for r in rows_]
        frontier[name] = sorted(set(pts))

    traces = list(results)
    cols = min(3, len(traces))
    rows = math.ceil(len(traces) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 4.2 * rows),
                             squeeze=False)
    first = results[traces[0]][0]
    fig.suptitle("aio-poll-replay: polling time against caught events "
                 f"(poll-max-ns {first['max_ns']}, poll-grow {first['grow']}, "
                 f"poll-shrink {first['shrink']})", fontsize=11)

    for ax, name in zip(axes.flat, traces):
        rows_ = results[name]
        pts = [(int(r["caught"]), int(r["polled_ns"]) / 1e6, r)
               for r in rows_]
        xs = [p[0] for p in pts]
        ys = [p[1] for p in pts]
        oracle = next(p for p in pts if p[2]["policy"] == "oracle")

        # Zoom on the points, with the frontier across the same range
        xlo, xhi = min(xs), max(xs)
        span = max(xhi - xlo, 10)
        xlo, xhi = xlo - 0.08 * span, xhi + 0.05 * span
        fr = [(k, v) for k, v in frontier[name] if xlo <= k <= xhi]
        ax.plot([k for k, _ in fr], [v for _, v in fr], "-", color="0.3",
                lw=1.2, label="oracle frontier", zorder=1)
        # Below the frontier: what no policy can reach
        floor = min([v for _, v in fr] + ys) - 1
        ax.fill([k for k, _ in fr] + [fr[-1][0], fr[0][0]],
                [v for _, v in fr] + [floor, floor], color="0.92", lw=0,
                zorder=0)

        series = []
        for x, y, r in pts:
            pol = r["policy"]
            if pol == "oracle":
                ax.plot(x, y, "*", ms=13, color="black", label="oracle",
                        zorder=3)
            elif pol == "unpatched":
                ax.plot(x, y, "X", ms=9, color="tab:red",
                        label="unpatched 10.2.2", zorder=3)
            else:
                series.append((x, y))
                ax.annotate(f"w={r['weight']}", (x, y),
                            textcoords="offset points", xytext=(4, 3),
                            fontsize=7, color="tab:blue")
        if series:
            ax.plot([x for x, _ in series], [y for _, y in series], "o",
                    ms=6, color="tab:blue", zorder=2,
                    label="series, w=" + ",".join(
                        r["weight"] for r in rows_
                        if r["policy"].startswith("series")))

        ylo = min(ys + [v for _, v in fr])
        yhi = max(ys + [v for _, v in fr])
        yspan = max(yhi - ylo, 0.01)
        ax.set_xlim(xlo, xhi)
        ax.set_ylim(ylo - 0.08 * yspan, yhi + 0.12 * yspan)
        ax.set_title(f"{name} ({rows_[0]['iterations']} iterations, "
                     f"{oracle[0]} catchable)", fontsize=9)
        ax.set_xlabel("events caught by polling")
        ax.set_ylabel("time spent polling (ms)")
        ax.ticklabel_format(useOffset=False, style="plain")
        ax.xaxis.set_major_locator(MaxNLocator(nbins=5, integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(nbins=5))
        ax.grid(True, lw=0.3)
        ax.legend(fontsize=7, loc="lower right")

    for ax in list(axes.flat)[len(traces):]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(out, dpi=100, metadata={"Software": None})


if __name__ == "__main__":
    main()
