#!/usr/bin/python3
"""The benchmark's statistics, in one place (report.py, bases.py and
harness/upstream/policy.py all use these), and the one reader of several
runs' samples.csv (pooled()).

A ratio is taken within a round (the variants of a round ran next to each
other, the order rotated each round), so that drift of the host cancels;
over the rounds the figure is the geometric mean of those paired ratios,
with a 95% t interval on the mean of their logarithms.  A verdict comes
from the interval alone:

  met           the whole interval is within the target
  missed        the whole interval is outside it
  not resolved  the interval straddles the target's edge (or n < 2)
"""

import csv
import math
import os
import re
import statistics
import sys

# two-sided 95% t quantiles by degrees of freedom
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447,
       7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179,
       13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110, 18: 2.101,
       19: 2.093, 20: 2.086, 22: 2.074, 24: 2.064, 26: 2.056, 28: 2.048,
       30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980}

MET, MISSED, UNRESOLVED = "met", "missed", "not resolved"

# The IOThread's CPU wherever a ratio of it is taken (report.py's verdicts,
# bases.py's table, harness/upstream/policy.py's): its schedstat run time
# (ns, /proc/PID/task/TID/schedstat), exact where utime+stime
# (iothread_cpu_ms_per_kio) are sampled in clock ticks.  One key, so that a
# figure quoted from any of the three is the same figure.
IO_CPU = "iothread_sched_ms_per_kio"

# A run whose window saw other processes take more than this much of a core
# (%) is left out of every figure (report.py, bases.py, policy.py; each has
# --keep-disturbed).
OTHER_MAX_PCT = 40


def t95(df):
    """The quantile of the largest tabulated df <= df (never narrower than
    the exact one)."""
    if df < 1:
        raise ValueError("no t quantile for %r degrees of freedom" % df)
    return T95[max(k for k in T95 if k <= df)]


def interval(ratios):
    """(geometric mean, low, high, n) of a list of positive ratios; low and
    high are None for n == 1, and the whole is None for n == 0."""
    logs = [math.log(r) for r in ratios if r > 0]
    n = len(logs)
    if n == 0:
        return None
    m = statistics.mean(logs)
    if n < 2:
        return (math.exp(m), None, None, n)
    h = t95(n - 1) * statistics.stdev(logs) / math.sqrt(n)
    return (math.exp(m), math.exp(m - h), math.exp(m + h), n)


def half_width(iv):
    """The interval's half-width as a fraction, on the log scale
    (exp(h) - 1): 0.05 is +-5%."""
    if not iv or iv[1] is None:
        return None
    return math.sqrt(iv[2] / iv[1]) - 1


def rounds_for(ratios, target=0.05):
    """Rounds needed for a half-width of `target` at the spread of these
    per-round ratios (the sd of their logs), or None."""
    logs = [math.log(r) for r in ratios if r > 0]
    if len(logs) < 2:
        return None
    sd = statistics.stdev(logs)
    h = math.log(1 + target)
    n = 2
    while t95(n - 1) * sd / math.sqrt(n) > h:
        n += 1
        if n > 10000:
            return None
    return n


def verdict(iv, lo=None, hi=None):
    """met / missed / not resolved for the target lo <= ratio <= hi (either
    bound may be None: one-sided)."""
    if not iv or iv[1] is None:
        return UNRESOLVED
    a, b = iv[1], iv[2]

    def inside(x):
        return (lo is None or x >= lo) and (hi is None or x <= hi)

    if inside(a) and inside(b):
        return MET
    if (hi is not None and a > hi) or (lo is not None and b < lo):
        return MISSED
    return UNRESOLVED


def fmt(iv, digits=3):
    if iv is None:
        return "-"
    g, lo, hi, n = iv
    if lo is None:
        return "%.*f (n=1)" % (digits, g)
    return "%.*f [%.*f, %.*f]" % (digits, g, digits, lo, digits, hi)


def pooled(runs):
    """The rows of the runs' samples.csv (folders @runs), the measured
    rounds of each run numbered on from the last of the run before (the
    warm-up stays 0): a round number then names one round of one run, and
    a paired ratio still compares the variants that ran next to each
    other"""
    rows, last = [], 0
    for run in runs:
        top = 0
        with open(os.path.join(run, "samples.csv"), newline="") as f:
            for r in csv.DictReader(f):
                k = int(r["round"])
                top = max(top, k)
                if k >= 1:
                    r["round"] = str(k + last)
                rows.append(r)
        last += top
    return rows


def pct_of_core(r, ms, window):
    """Row @r's CPU time @ms (ms) over its window @window (s), in % of one
    core; None where the row has not both."""
    try:
        return 100.0 * float(r[ms]) / 1000.0 / float(r[window])
    except (KeyError, ValueError, TypeError, ZeroDivisionError):
        return None


def other_pct(r):
    """The CPU that processes other than QEMU and fio took during row @r's
    window, in % of one core; None where the row does not say."""
    return pct_of_core(r, "other_cpu_ms", "other_window_s")


def disturbed(r, max_other=OTHER_MAX_PCT):
    """Whether row @r's window saw other processes take more than
    @max_other % of a core (never, with @max_other None)"""
    o = other_pct(r)
    return max_other is not None and o is not None and o > max_other


def measured(runs, max_other=OTHER_MAX_PCT):
    """pooled() rows of the measured rounds that ran without error (a hung
    run's status is "hang"), less the disturbed() ones: the rows that
    report.py's statistics use, so that a ratio from report.py, bases.py
    or policy.py pairs the same runs (@max_other None keeps the disturbed
    ones, as --keep-disturbed)"""
    return [r for r in pooled(runs)
            if r["status"] == "ok" and int(r["round"]) >= 1
            and not disturbed(r, max_other)]


def num(r, k):
    try:
        return float(r.get(k) or "nan")
    except (TypeError, ValueError):
        return float("nan")


def paired(a, b, key):
    """Per-round ratios a/b of metric key over the rounds both have; a and b
    map a round key to a samples.csv row."""
    out = []
    for rnd in sorted(set(a) & set(b)):
        x, y = num(a[rnd], key), num(b[rnd], key)
        if x > 0 and y > 0:
            out.append(x / y)
    return out


def paired_of_ratios(a, fa, b, fb, key):
    """Per-round (a/fa) / (b/fb): each build over its own floor."""
    out = []
    for rnd in sorted(set(a) & set(fa) & set(b) & set(fb)):
        v = [num(x[rnd], key) for x in (a, fa, b, fb)]
        if all(x > 0 for x in v):
            out.append((v[0] / v[1]) / (v[2] / v[3]))
    return out


def floor_of(label, labels):
    """The label of the variant's own build's floor (poll-max-ns=0), or
    None: unpatched -> floor; wN and series -> series-floor (floor where
    the run has none); upstream and upN -> upstream-floor."""
    if label in ("unpatched",):
        return "floor"
    if label == "upstream" or re.fullmatch(r"up\d+", label):
        return "upstream-floor"
    if label == "series" or re.fullmatch(r"w\d+", label):
        return "series-floor" if "series-floor" in labels else "floor"
    return None


def emit(text, path=None):
    """Write a report's @text to @path, if given, and to standard output"""
    if path:
        with open(path, "w") as f:
            f.write(text)
    sys.stdout.write(text)
