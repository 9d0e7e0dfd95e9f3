#!/usr/bin/python3
"""How often a benchmark's run hung, per build and venue: the stall of the
TCG guest that ../shared/build-notes.md records (the device's rings
drained, the guest's fio waiting for completions it does not see), which
the runner's watchdog catches, saving the device's state and starting the
run again (run.py; samples.csv keeps the hung attempt, its status
"hang").

Usage: hangs.py [DIR...] [--out FILE]

DIRs are benchmark folders with a samples.csv (default: every folder under
results/ that has one, but the pooled reports, which copy no samples, and
the loop benchmark's, which has no venue).  The unit is a start of QEMU or
of the storage daemon: one (folder, venue, variant, round, attempt), which
runs every workload of its round; it hung if any of its rows did.  Per
build (the binary's tree: unpatched 10.2.2, the series on 10.2.2, upstream
11.1.3, the 10.0.13 builds) and venue: the starts, those that hung, the
rate with its exact 95% (Clopper-Pearson) interval; and, per build, a
two-sided Fisher exact test of its rate against all other builds' pooled,
over the guest venues.  Prints Markdown, or writes it to FILE.
"""

import argparse
import csv
import glob
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def build_of(binary):
    """The build a samples.csv row's binary path names"""
    if "upstream" in binary:
        return "upstream 11.1.3"
    # p15: a copy of the series tree at patch 15 (long-p16-intel,
    # long-p16idle-intel)
    if "/10.0.13/" in binary:
        return "10.0.13 (" + ("series" if "series" in binary or
                              "/p15/" in binary else "unpatched") + ")"
    if "/base/" in binary or "traced-unpatched" in binary:
        return "unpatched 10.2.2"
    if "series" in binary or "traced-new" in binary or "/p15/" in binary:
        return "series (10.2.2)"
    return "other"


def starts(dirs):
    """{(build, venue): [starts, hung]} over the samples.csv of @dirs"""
    seen = {}
    for d in dirs:
        with open(os.path.join(d, "samples.csv"), newline="") as f:
            for r in csv.DictReader(f):
                key = (d, r["venue"], r["variant"], r["round"],
                       r.get("attempt", "1"))
                cell = (build_of(r.get("binary", "")), r["venue"])
                hung = r["status"] == "hang"
                old = seen.get(key)
                seen[key] = (cell, hung or (old is not None and old[1]))
    out = {}
    for cell, hung in seen.values():
        c = out.setdefault(cell, [0, 0])
        c[0] += 1
        c[1] += hung
    return out


def log_comb(n, k):
    """log of n choose k"""
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def binom_cdf(k, n, p):
    """P(X <= k) for X ~ Binomial(n, p)"""
    if p <= 0:
        return 1.0
    if p >= 1:
        return 1.0 if k >= n else 0.0
    return min(1.0, sum(math.exp(log_comb(n, i) + i * math.log(p)
                                 + (n - i) * math.log1p(-p))
                        for i in range(0, k + 1)))


def clopper_pearson(k, n, alpha=0.05):
    """The exact two-sided (1 - @alpha) interval of a rate of @k in @n"""
    def solve(f):
        lo, hi = 0.0, 1.0
        for _ in range(100):
            mid = (lo + hi) / 2
            if f(mid):
                hi = mid
            else:
                lo = mid
        return (lo + hi) / 2
    low = 0.0 if k == 0 else \
        solve(lambda p: 1 - binom_cdf(k - 1, n, p) >= alpha / 2)
    high = 1.0 if k == n else \
        solve(lambda p: binom_cdf(k, n, p) <= alpha / 2)
    return low, high


def fisher(a, b, c, d):
    """Two-sided Fisher exact p of the table [[a, b], [c, d]] (hung, not
    hung per row): the probability of the tables with the same margins
    no more likely than this one"""
    n1, n2, k = a + b, c + d, a + c

    def prob(x):
        return math.exp(log_comb(n1, x) + log_comb(n2, k - x)
                        - log_comb(n1 + n2, k))
    p0 = prob(a)
    return min(1.0, sum(prob(x)
                        for x in range(max(0, k - n2), min(k, n1) + 1)
                        if prob(x) <= p0 * (1 + 1e-9)))


def table(counts):
    """The Markdown of starts() counts"""
    out = ["| build | venue | starts | hung | rate, 95% interval |",
           "|---|---|--:|--:|--:|"]
    for (build, venue), (n, h) in sorted(counts.items()):
        lo, hi = clopper_pearson(h, n)
        out.append("| %s | %s | %d | %d | %.2f%% [%.2f%%, %.2f%%] |"
                   % (build, venue, n, h, 100.0 * h / n, 100 * lo, 100 * hi))
    guests = {}
    for (build, venue), (n, h) in counts.items():
        if venue.startswith("guest"):
            g = guests.setdefault(build, [0, 0])
            g[0] += n
            g[1] += h
    out += ["", "Guest venues, each build against all the others pooled "
            "(two-sided Fisher exact test):", "",
            "| build | starts | hung | rate, 95% interval | the others | "
            "hung | p |", "|---|--:|--:|--:|--:|--:|--:|"]
    for build, (n, h) in sorted(guests.items()):
        on = sum(v[0] for b, v in guests.items() if b != build)
        oh = sum(v[1] for b, v in guests.items() if b != build)
        lo, hi = clopper_pearson(h, n)
        out.append("| %s | %d | %d | %.2f%% [%.2f%%, %.2f%%] | %d | %d | "
                   "%.2f |" % (build, n, h, 100.0 * h / n, 100 * lo,
                               100 * hi, on, oh,
                               fisher(h, n - h, oh, on - oh)))
    return "\n".join(out) + "\n"


def is_bench(path):
    """whether the samples.csv at @path is the benchmark runner's, which
    starts() reads: it names a venue per row (the loop benchmark's does
    not)"""
    with open(path, newline="") as f:
        return "venue" in next(csv.reader(f), [])


def default_dirs(root=ROOT):
    return sorted(os.path.dirname(f) for f in glob.glob(
        os.path.join(root, "results", "**", "samples.csv"), recursive=True)
        if "/pooled" not in f and is_bench(f))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", nargs="*")
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    dirs = a.dir or default_dirs()
    text = ("Runs that hung, over the samples.csv of %d benchmark "
            "folders (`harness/bench/hangs.py`); a start is one QEMU or "
            "storage daemon of one variant in one round, running each "
            "workload of the round.\n\n" % len(dirs)) + table(starts(dirs))
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
