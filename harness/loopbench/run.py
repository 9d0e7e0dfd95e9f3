#!/usr/bin/python3
"""./apw loopbench: QEMU's event loop on the wall clock, without a guest.

usage: run.py --out DIR --rounds R --variant LABEL=BIN[:ARGS] ...
              [--pattern PATTERN ...] [--events-ms MS]
       run.py --report DIR

Runs aio_loop_bench (harness/loopbench/aio_loop_bench.c), built against
each build, for every gap pattern and variant, round after round with the
order of the variants rotated each round, and writes DIR/samples.csv and
DIR/report.md: per pattern, each variant's CPU per event, wakeups per
event and latency, and the paired per-round ratios with 95% t intervals
(harness/bench/stats.py) against the floor (poll-max-ns=0) and against
unpatched 10.2.2, with the verdict words of the targets.
"""
import argparse
import csv
import os
import platform
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "bench"))
import stats  # noqa: E402

# The default patterns: gaps shorter than a wakeup's price (polling is
# cheaper and faster, 3 and 8 us), one longer than the price but within poll-max-ns
# (polling buys latency with CPU), one longer than poll-max-ns (polling
# cannot help), Poisson arrivals, and on/off bursts.
PATTERNS = ["fixed:3000", "fixed:8000", "fixed:20000", "fixed:200000",
            "exp:30000", "bursts:3000,16,500000"]

# Latency ratios compare the median event's latency: the mean is ruled by
# the few events that wait while the host preempts the loop thread (p99
# 0.05-1.5 ms in the same run), which no policy causes.
LAT = "lat_p50_ns"

KEYS = ["cpu_ns_per_event", "notify_ns_per_event", "vcsw_per_event", "lat_mean_ns", "lat_p50_ns",
        "lat_p99_ns", "by_poll", "by_fd", "empty_fd", "fd_writes",
        "wall_ns_per_event", "producer_late_ns"]
FIELDS = ["round", "pattern", "variant", "events", "seconds"] + KEYS + [
    "total_cpu_ns_per_event"]
# The CPU that the ratios compare: the loop thread's, and the producer's
# fd writes that wake it up (a wakeup's price is paid on both sides)
CPU = "total_cpu_ns_per_event"

# The targets: CPU per event at most 1.05x the floor's where polling cannot
# help; where unpatched gains latency over the floor, at least 90% of its
# gain
CPU_TARGET = 1.05
GAIN_TARGET = 0.90


def mean_gap(pattern):
    kind, _, arg = pattern.partition(":")
    v = [float(x) for x in arg.split(",")]
    if kind in ("fixed", "exp"):
        return v[0]
    if kind == "bursts":
        g, k, off = v
        return ((k - 1) * g + off) / k
    raise SystemExit("run.py: unknown pattern %s" % pattern)


def events_for(pattern, ms):
    """Events of a run of about @ms milliseconds, 3000..200000."""
    return int(min(200000, max(3000, ms * 1e6 / mean_gap(pattern))))


def parse(line):
    out = {}
    for w in line.split():
        k, _, v = w.partition("=")
        out[k] = v
    return out


def run(a):
    variants = []
    for spec in a.variant:
        label, _, rest = spec.partition("=")
        binary, _, args = rest.partition(":")
        variants.append((label, binary, args.split()))
    patterns = a.pattern or PATTERNS
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "meta.txt"), "w") as f:
        f.write("date: %s\nhost: %s, %d CPUs\nrounds: %d\nvariants: %s\n"
                "patterns: %s\nrun length: about %d ms of events each\n" % (
                    time.strftime("%Y-%m-%d %H:%M:%S %z"), platform.release(),
                    os.cpu_count(), a.rounds, "; ".join(a.variant),
                    " ".join(patterns), a.events_ms))
    path = os.path.join(a.out, "samples.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        for r in range(a.rounds):
            for p in patterns:
                n = events_for(p, a.events_ms)
                k = r % len(variants)
                for label, binary, args in variants[k:] + variants[:k]:
                    t0 = time.time()
                    cmd = [binary, p, str(n), "--seed=%d" % (r + 1)] + args
                    res = subprocess.run(cmd, capture_output=True, text=True,
                                         timeout=600)
                    if res.returncode:
                        raise SystemExit("run.py: %s failed: %s" % (
                            " ".join(cmd), res.stderr.strip()))
                    d = parse(res.stdout)
                    row = {"round": r + 1, "pattern": p, "variant": label,
                           "events": d["events"],
                           "seconds": round(time.time() - t0, 3)}
                    row.update({k2: d[k2] for k2 in KEYS})
                    row[CPU] = round(float(d["cpu_ns_per_event"]) +
                                     float(d["notify_ns_per_event"]), 1)
                    w.writerow(row)
                    f.flush()
                    print("r%d %-22s %-10s cpu %7.0f+%4.0f ns/ev  wakeups %.3f/ev  "
                          "lat %7.0f ns (p99 %7s)  polled %s fd %s" % (
                              r + 1, p, label, float(d["cpu_ns_per_event"]),
                              float(d["notify_ns_per_event"]),
                              float(d["vcsw_per_event"]),
                              float(d["lat_mean_ns"]), d["lat_p99_ns"],
                              d["by_poll"], d["by_fd"]), flush=True)
    report(a.out)


def load(out):
    with open(os.path.join(out, "samples.csv")) as f:
        rows = list(csv.DictReader(f))
    by = {}
    for r in rows:
        by.setdefault(r["pattern"], {}).setdefault(r["variant"], {})[
            r["round"]] = r
    return rows, by


def gain_ratios(v, u, fl):
    """Per round: (floor - v) / (floor - unpatched) of the median latency,
    the share of unpatched's latency gain that v keeps."""
    out = []
    for rnd in sorted(set(v) & set(u) & set(fl)):
        x, y, z = (stats.num(d[rnd], LAT) for d in (v, u, fl))
        if z - y > 0:
            out.append((z - x) / (z - y))
    return out


def mean_interval(xs):
    """(mean, low, high, n) of plain values, 95% t interval."""
    n = len(xs)
    if n < 2:
        return (xs[0], None, None, n) if xs else None
    m = statistics.mean(xs)
    h = stats.t95(n - 1) * statistics.stdev(xs) / n ** 0.5
    return (m, m - h, m + h, n)


def cell(iv, lo=None, hi=None, digits=2):
    if iv is None:
        return "-"
    return "%s **%s**" % (stats.fmt(iv, digits), stats.verdict(iv, lo, hi))


def report(out):
    rows, by = load(out)
    variants = []
    for r in rows:
        if r["variant"] not in variants:
            variants.append(r["variant"])
    lines = ["# aio_loop_bench: the event loop on the wall clock", ""]
    with open(os.path.join(out, "meta.txt")) as f:
        lines += ["- " + x.rstrip() for x in f if x.strip()]
    lines += [
        "- per run: one AioContext thread and one producer thread on their "
        "own CPUs; CPU = the loop thread's CLOCK_THREAD_CPUTIME_ID per event "
        "plus the producer's time in the fd writes that notify it (the "
        "ratios compare the sum); "
        "wakeups = its voluntary context switches per event; latency = "
        "posting to handler; latency ratios and the share of unpatched's "
        "gain use the median event (the mean is ruled by the host's "
        "preemptions of the loop thread)",
        "- ratios: per round, paired within the round; geometric mean over "
        "rounds with a 95% t interval on the logs; met: the whole interval "
        "within the target, missed: all outside, not resolved: otherwise",
        ""]
    for p in by:
        vs = by[p]
        lines += ["## %s (mean gap %.1f us)" % (p, mean_gap(p) / 1000), "",
                  "Medians over the rounds:", "",
                  "| variant | n | CPU ns/event | loop + notifier | wakeups/event "
                  "| latency mean ns "
                  "| p50 ns | p99 ns | polled share | producer late ns |",
                  "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
        for v in variants:
            if v not in vs:
                continue
            d = list(vs[v].values())

            def med(k):
                return statistics.median(stats.num(x, k) for x in d)
            polled = med("by_poll")
            share = polled / max(polled + med("by_fd"), 1)
            lines.append("| %s | %d | %.0f | %.0f + %.0f | %.3f | %.0f | %.0f "
                         "| %.0f | %.2f | %.0f |" % (
                             v, len(d), med(CPU), med("cpu_ns_per_event"),
                             med("notify_ns_per_event"), med("vcsw_per_event"),
                                       med("lat_mean_ns"), med("lat_p50_ns"),
                                       med("lat_p99_ns"), share,
                                       med("producer_late_ns")))
        lines += ["", "Paired ratios [95% interval]:", "",
                  "| variant | CPU/event vs floor (<= %.2f) | p50 latency vs floor "
                  "| CPU/event vs unpatched | p50 latency vs unpatched "
                  "| share of unpatched's latency gain (>= %.2f) |" % (
                      CPU_TARGET, GAIN_TARGET),
                  "|---|--:|--:|--:|--:|--:|"]
        fl = vs.get("floor")
        un = vs.get("unpatched")
        for v in variants:
            if v in ("floor",) or v not in vs:
                continue
            c_f = stats.interval(stats.paired(vs[v], fl, CPU)) if fl else None
            l_f = stats.interval(stats.paired(vs[v], fl, LAT)) if fl else None
            c_u = l_u = g = None
            if un and v != "unpatched":
                c_u = stats.interval(stats.paired(vs[v], un, CPU))
                l_u = stats.interval(stats.paired(vs[v], un, LAT))
                if fl:
                    g = mean_interval(gain_ratios(vs[v], un, fl))
            lines.append("| %s | %s | %s | %s | %s | %s |" % (
                v, cell(c_f, hi=CPU_TARGET), stats.fmt(l_f, 2),
                stats.fmt(c_u, 2), stats.fmt(l_u, 2),
                cell(g, lo=GAIN_TARGET) if g else "-"))
        lines.append("")
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("report: %s" % os.path.join(out, "report.md"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--variant", action="append", default=[])
    ap.add_argument("--pattern", action="append", default=[])
    ap.add_argument("--events-ms", type=int, default=400)
    ap.add_argument("--report")
    a = ap.parse_args()
    if a.report:
        report(a.report)
        return 0
    if not a.out or not a.variant:
        ap.error("--out and --variant are needed")
    run(a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
