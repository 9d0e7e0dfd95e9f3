#!/usr/bin/env python3
"""What the series' policy itself adds to an IOThread's CPU, per I/O, at most

Usage: own_cost.py EVIDENCE_DIR [--long RUN...] [--instructions N]
                   [--ns-per-instruction X] [--out FILE]

For every run of the whole series ('new') in a recording of ./apw evidence
(EVIDENCE_DIR: its traces/measured.csv, replay-validation.csv and
bench/samples.csv), the two things the policy adds over the same build
with poll-max-ns=0:

  - its polling time per I/O, as the validation measured it from the run's
    iteration trace (the polling beyond the clock reads that every
    iteration pays), and the cost of entering and leaving poll mode in
    the iterations that polled (the run's own poll_entry_ns, as
    complete.py measures it; where that is negative or missing, the
    median of the recording's positive ones);
  - its bookkeeping: the iterations of aio_poll() per I/O (summed over the
    IOThreads) times N instructions (default 176: callgrind's largest
    difference between patches 1-15 and their poll-max-ns=0, where the
    thread blocks, results/callgrind-scaling-p15.csv; patches 1-16: 180,
    results/callgrind-scaling.csv), each taken at X ns (default 1.0).

Both as a share of the floor's IOThread CPU per I/O (schedstat): that of
the same round of the recording ('floor'), and, with --long, the median of
the 'series-floor' runs of those ./apw bench runs in the same venue and
workload (untraced builds, so a smaller denominator). Writes a Markdown
table and the largest share.
"""

import argparse
import csv
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "bench"))
import stats  # noqa: E402


def runs(evidence):
    """(venue, workload, variant, round) -> {trace, ios, iterations, entry}:
    the rows of measured.csv, one per run (a run with two IOThreads has a
    row, and a trace, per IOThread: their iterations and the ns of
    entering and leaving poll mode summed, the trace named as the
    validation names it)"""
    out = {}
    with open(os.path.join(evidence, "traces", "measured.csv")) as f:
        rows = list(csv.DictReader(f))
    # a run's cost of entering poll mode is a difference of means and
    # comes out negative or missing where few iterations polled: those
    # take the median of the recording's positive ones
    known = [int(r["poll_entry_ns"]) for r in rows
             if int(r["poll_entry_ns"] or 0) > 0]
    median = statistics.median(known) if known else 0
    for r in rows:
        k = (r["venue"], r["workload"], r["variant"], r["round"])
        trace = re.sub(r"(-t\d+)?\.trace\.gz$", "", r["trace"])
        if k not in out:
            out[k] = {"trace": trace, "ios": int(r["ios"]),
                      "iterations": 0, "entry": 0}
        own = int(r["poll_entry_ns"] or 0)
        out[k]["iterations"] += int(r["iterations"])
        out[k]["entry"] += int(r["polled_iterations"]) * \
            (own if own > 0 else median)
    return out


def polling(evidence):
    """trace -> the polling time per I/O that the run measured"""
    with open(os.path.join(evidence, "replay-validation.csv")) as f:
        return {r["trace"]: float(r["measured"]) for r in csv.DictReader(f)
                if r["source"] == "own" and
                r["metric"] == "polling_ns_per_io"}


def floors(long_runs):
    """(venue, workload) -> median IOThread CPU ns per I/O of series-floor"""
    by = {}
    for r in stats.measured(long_runs) if long_runs else []:
        if r["variant"] == "series-floor":
            by.setdefault((r["venue"], r["workload"]), []).append(
                stats.num(r, stats.IO_CPU) * 1e3)
    return {k: statistics.median(v) for k, v in by.items()}


def rows(evidence, long_runs, instructions, ns_per_instruction):
    """per run of 'new': (venue, workload, round, polling ns/I/O,
    iterations/I/O, bookkeeping and entry ns/I/O, floor CPU ns/I/O of the
    round,
    share, long runs' floor CPU ns/I/O or None, share or None)"""
    meas, poll = runs(evidence), polling(evidence)
    bench = {(r["venue"], r["workload"], r["variant"], r["round"]): r
             for r in stats.measured([os.path.join(evidence, "bench")])}
    longf = floors(long_runs)
    out = []
    for (v, w, var, rnd), m in sorted(meas.items()):
        fl = bench.get((v, w, "floor", rnd))
        if var != "new" or fl is None:
            continue
        p = poll[m["trace"]]
        it = m["iterations"] / m["ios"]
        book = it * instructions * ns_per_instruction + m["entry"] / m["ios"]
        own = stats.num(fl, stats.IO_CPU) * 1e3
        lf = longf.get((v, w))
        out.append((v, w, rnd, p, it, book, own, (p + book) / own, lf,
                    (p + book) / lf if lf else None))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("evidence")
    ap.add_argument("--long", nargs="*", default=[])
    ap.add_argument("--instructions", type=float, default=176)
    ap.add_argument("--ns-per-instruction", type=float, default=1.0)
    ap.add_argument("--out")
    a = ap.parse_args()
    rs = rows(a.evidence, a.long, a.instructions, a.ns_per_instruction)
    lines = [
        "What the policy of the whole series ('new') adds over its "
        "poll-max-ns=0, per I/O, at most: its polling (measured from its "
        "iteration trace) and entering and leaving poll mode, and %g "
        "instructions of bookkeeping per aio_poll() at %g ns each, as a share of the floor's IOThread CPU "
        "per I/O (schedstat)." % (a.instructions, a.ns_per_instruction), "",
        "| venue | workload | round | polling ns/I/O | aio_poll() per I/O "
        "| bookkeeping and entry ns/I/O | floor's CPU ns/I/O, same round | share "
        "| floor's CPU ns/I/O, long runs | share |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for v, w, rnd, p, it, book, own, s1, lf, s2 in rs:
        lines.append("| %s | %s | %s | %.1f | %.2f | %.0f | %.0f | %.2f%% | "
                     "%s | %s |" % (v, w, rnd, p, it, book, own, 100 * s1,
                                    "%.0f" % lf if lf else "-",
                                    "%.2f%%" % (100 * s2) if s2 else "-"))
    worst = max((s for r in rs for s in (r[7], r[9]) if s), default=None)
    lines += ["", "Largest share: %s" % (
        "%.2f%%" % (100 * worst) if worst is not None else "-")]
    text = "\n".join(lines) + "\n"
    stats.emit(text, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
