#!/usr/bin/python3
"""What the waits that polled and caught nothing cost, measured and charged.

Usage: cut_waits.py LOG TRACE [LOG TRACE]... [--measured CSV] [--md FILE]
                    [--csv FILE]

LOG is a run's iteration-trace log (the aio_poll_iter lines of a build
with harness/replay/iter_trace.py), TRACE the complete trace that
complete.py made of it (`evidence.py convert`): its header gives the
AioContext and the I/O window, so the same iterations are taken.

Each iteration in which the run polled (complete.py's poll_cap() above
0) and polling did not catch the event falls in one class:

  cut     it did not sleep and polling ended before the time the policy
          had set and the cap: the fd monitor's need_wait() turned true,
          or polling caught only the AioContext's notifier, which sets the
          timeout to 0 (aio-poll-replay's polling_cut())
  full    it did not sleep and polling ran its whole time; the event was
          there when the fd wait began
  slept   it slept in the fd wait

and for each class, per wait: the thread's CPU time in try_poll_mode()
less the base that every iteration pays (complete.py's cpu_base_ns: the
mean over the iterations that did not poll; where every iteration
polled there is none, and with --measured (the recording's
measured.csv) the per-iteration time that evidence.py's validation
takes instead, the floor's: the row's polling_cpu_overhead_ns over its
iterations; else the CPU is left empty), the
wall-clock time polling took (from where the wait starts to the end of
try_poll_mode(), complete.py's polled_ns), and what
aio-poll-replay charges a policy that polls as long as the run did, at
a cost of entering and leaving poll mode of 0: up to the cut for a cut
wait (polled_charge()), the wait up to the time set for the others
(the replay adds the cost, --poll-entry, to these: since 2026-12-06,
late evening, what the run's full polls measured, evidence.py's
full_entry(), which their CPU and charge here tell); "whole" is the
charge before 2026-12-06, the wait up to the time set for every class.
"""

import argparse
import csv
import gzip
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import complete  # noqa: E402

CLASSES = ("cut", "full", "slept")
FIELDS = ["trace", "ios", "cpu_base_ns"] + [
    "%s_%s" % (k, f) for k in CLASSES
    for f in ("per_io", "cpu_ns", "wall_ns", "charge_ns", "whole_ns")]


def header(trace):
    """(AioContext, (t0, t1) s or None, I/Os) from @trace's header"""
    with gzip.open(trace, "rt") if trace.endswith(".gz") else \
            open(trace) as f:
        lines = []
        for line in f:
            if not line.startswith("#"):
                break
            lines.append(line)
        text = "".join(lines)
    ctx = re.search(r"AioContext (\S+?)(?:;| in )", text)
    win = re.search(r" in ([\d.]+)\.\.([\d.]+) s", text)
    ios = re.search(r"# ios (\d+)", text)
    if not ctx:
        sys.exit("cut_waits.py: %s has no AioContext in its header" % trace)
    return (ctx.group(1),
            (float(win.group(1)), float(win.group(2))) if win else None,
            int(ios.group(1)) if ios else 0)


def classify(iters, sleep_ns=4000, fallback=None):
    """{class: [(cpu_ns or None, wall_ns, charge_ns, whole_ns)]} of the
    polled waits of @iters that polling did not end, and the base (the
    iterations' own, else @fallback)"""
    base = complete.cpu_base(iters)
    if base is None:
        base = fallback
    out = {k: [] for k in CLASSES}
    for it in iters:
        t0, t_poll, t_wait, cpu, vcsw, cap, pns, caught = it[:8]
        set_ns = complete.poll_cap(pns, cap)
        if set_ns <= 0 or caught:
            continue
        # the wait and its polled_ns as the complete trace has them
        _, wait, wall = complete.wait_span(t0, t_poll, t_wait, caught,
                                           it[11])
        whole = min(wait, set_ns)
        if complete.iter_slept(it, sleep_ns):
            k, charge = "slept", set_ns
            whole = set_ns
        elif wall < set_ns:
            k, charge = "cut", min(wall, whole)
        else:
            k, charge = "full", whole
        out[k].append((None if cpu is None or base is None else cpu - base,
                       wall, charge, whole))
    return out, base


def overhead_bases(path):
    """{trace file name: the per-iteration CPU that evidence.py takes as
    the base of a run without its own (measured.csv's
    polling_cpu_overhead_ns / iterations)}"""
    with open(path) as f:
        return {r["trace"]: int(r["polling_cpu_overhead_ns"]) /
                int(r["iterations"]) for r in csv.DictReader(f)
                if r.get("polling_cpu_overhead_ns") and
                r["cpu_base_ns"] == ""}


def row(log, trace, bases):
    ctx, window, ios = header(trace)
    per = complete.parse(log)
    if ctx not in per:
        sys.exit("cut_waits.py: %s has no iteration of %s" % (log, ctx))
    iters = complete.in_window(per[ctx], window)
    classes, base = classify(iters,
                            fallback=bases.get(os.path.basename(trace)))
    r = {"trace": os.path.basename(trace).split(".trace")[0], "ios": ios,
         "cpu_base_ns": "" if base is None else round(base)}
    for k, ws in classes.items():
        n = len(ws)
        r["%s_per_io" % k] = round(n / ios, 3) if ios else ""
        for i, f in enumerate(("cpu_ns", "wall_ns", "charge_ns",
                               "whole_ns")):
            vals = [w[i] for w in ws if w[i] is not None]
            r["%s_%s" % (k, f)] = round(sum(vals) / len(vals)) \
                if vals and len(vals) == n else ""
    return r


def markdown(rows):
    out = ["| trace | base | " + " | ".join(
        "%s: per I/O, CPU, wall, charge, whole" % k for k in CLASSES) +
        " |", "|---|--:|" + "--:|" * len(CLASSES)]
    for r in rows:
        out.append("| %s | %s | %s |" % (r["trace"], r["cpu_base_ns"] or "-",
                   " | ".join(", ".join(
                       str(r["%s_%s" % (k, f)]) if r["%s_%s" % (k, f)] != ""
                       else "-" for f in ("per_io", "cpu_ns", "wall_ns",
                                          "charge_ns", "whole_ns"))
                       for k in CLASSES)))
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n", 2)[2])
    ap.add_argument("pairs", nargs="+", metavar="LOG TRACE")
    ap.add_argument("--measured", help="the recording's measured.csv: the "
                    "base of the runs without their own")
    ap.add_argument("--md", help="write the table as Markdown here")
    ap.add_argument("--csv", help="write the table as CSV here")
    a = ap.parse_args()
    if len(a.pairs) % 2:
        ap.error("LOG and TRACE come in pairs")
    bases = overhead_bases(a.measured) if a.measured else {}
    rows = [row(a.pairs[i], a.pairs[i + 1], bases)
            for i in range(0, len(a.pairs), 2)]
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, FIELDS, lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
    text = markdown(rows)
    if a.md:
        with open(a.md, "w") as f:
            f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
