#!/usr/bin/python3
"""Summarise a benchmark folder: samples.csv -> report.md and plots/*.png.

Usage: report.py DIR [--order LABEL,LABEL,...]
       report.py DIR DIR... --out OUT [--order ...]

With several DIRs (runs of the same venues and variants), their measured
rounds are pooled, numbered on from one run to the next, so that each
paired ratio still compares the variants of one round; the report goes to
OUT, with the first run's meta.json and the runs named.

Per venue and workload, one table laid out like the QEMU-list seeds'
(build | IOPS | vs baseline), extended with the spread (min-max over the
measured rounds), the IOThread's and the whole QEMU process's CPU per 1000
I/Os, latency, and ratios of medians against `unpatched` and `floor`.
Round 0 (warm-up), errors and hangs are left out of the figures; hangs are
counted.  Prints the markdown and the plot paths.

Then the paired statistics (stats.py): per round, each variant's ratio to
its own build's floor and to unpatched; over the rounds the geometric mean
with a 95% t interval, and the verdict words of TARGETS (met, missed, not
resolved); the spread of the per-round ratios and the rounds it would take
for +-5%; plots/ratios-*.png, each variant's ratio to its floor with its
interval and the target as a line.
"""

import argparse
import json
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stats  # noqa: E402

REFS = ("unpatched", "floor")
METRICS = [  # key, title, format
    ("iops", "IOPS", "%.0f"),
    ("lat_mean_us", "lat mean us", "%.0f"),
    ("lat_p50_us", "lat p50 us", "%.0f"),
    ("lat_p99_us", "lat p99 us", "%.0f"),
    ("iothread_cpu_ms_per_kio", "IOThread CPU ms/1k I/O", "sig"),
    ("qemu_cpu_ms_per_kio", "QEMU CPU ms/1k I/O", "sig"),
]


def fnum(x, fmt):
    if x is None:
        return "-"
    if fmt == "sig":   # three significant digits, no exponent
        if x == 0:
            return "0"
        return "%.*f" % (max(0, 2 - math.floor(math.log10(abs(x)))), x)
    return fmt % x


def weight_of(props):
    for p in (props or "").split(","):
        k, _, v = p.partition("=")
        if k == "poll-weight":
            try:
                return int(v)
            except ValueError:
                return None
    return None


class Cell:
    """The measured rounds of one (venue, workload, variant)."""

    def __init__(self, label):
        self.label, self.rows, self.hangs, self.errors = label, [], 0, 0
        self.disturbed = 0
        self.props, self.rate = "", ""

    def values(self, key):
        out = []
        for r in self.rows:
            try:
                out.append(float(r[key]))
            except (KeyError, ValueError, TypeError):
                pass
        return out

    def stat(self, key):
        v = self.values(key)
        if not v:
            return None
        return statistics.median(v), min(v), max(v)


def group(rows, max_other=None):
    """Cells of the measured rounds.  With max_other (% of a core), a run
    whose window saw other processes take more than that is counted in
    Cell.disturbed and left out (the paired statistics then pair only the
    rounds both variants kept)."""
    cells = {}   # (venue, workload) -> {label: Cell}
    order = []
    for r in rows:
        key = (r["venue"], r["workload"])
        if key not in cells:
            cells[key] = {}
        c = cells[key].setdefault(r["variant"], Cell(r["variant"]))
        if r["variant"] not in order:
            order.append(r["variant"])
        c.props, c.rate = r.get("props", ""), r.get("rate_iops", "")
        if int(r["round"]) < 1:
            continue
        if r.get("hang") == "1":
            c.hangs += 1
        elif r["status"] == "ok":
            if stats.disturbed(r, max_other):
                c.disturbed += 1
            else:
                c.rows.append(r)
        else:
            c.errors += 1
    return cells, order


def ratio(c, ref, key):
    a, b = c.stat(key), ref.stat(key) if ref else None
    if not a or not b or not b[0]:
        return "-"
    return "%.2fx" % (a[0] / b[0])


def spread(st, fmt):
    if not st:
        return "-"
    return "%s (%s-%s)" % (fnum(st[0], fmt), fnum(st[1], fmt), fnum(st[2], fmt))


def table(cells, order):
    refs = {k: cells.get(k) for k in REFS}
    hdr = ["build", "iothread props", "n", "IOPS (min-max)", "vs unpatched",
           "vs floor", "lat mean us", "p50 us", "p99 us", "lat vs unpatched",
           "IOThread CPU ms/1k I/O (min-max)", "vs unpatched", "vs floor",
           "QEMU CPU ms/1k I/O (min-max)", "vs unpatched", "vs floor", "hangs"]
    lines = ["| " + " | ".join(hdr) + " |",
             "|" + "|".join(["---"] * 2 + ["--:"] * (len(hdr) - 2)) + "|"]
    for label in order:
        c = cells.get(label)
        if c is None:
            continue
        io, qc = "iothread_cpu_ms_per_kio", "qemu_cpu_ms_per_kio"
        lm = c.stat("lat_mean_us")
        row = [label, c.props or "(defaults)", "%d%s" % (
                   len(c.rows), " +%d err" % c.errors if c.errors else ""),
               spread(c.stat("iops"), "%.0f"),
               ratio(c, refs["unpatched"], "iops"), ratio(c, refs["floor"], "iops"),
               spread(lm, "%.0f"),
               fnum((c.stat("lat_p50_us") or [None])[0], "%.0f"),
               fnum((c.stat("lat_p99_us") or [None])[0], "%.0f"),
               ratio(c, refs["unpatched"], "lat_mean_us"),
               spread(c.stat(io), "sig"),
               ratio(c, refs["unpatched"], io), ratio(c, refs["floor"], io),
               spread(c.stat(qc), "sig"),
               ratio(c, refs["unpatched"], qc), ratio(c, refs["floor"], qc),
               str(c.hangs)]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def summary(cells, order, venue):
    """One line per workload: each variant's IOPS and IOThread CPU per I/O
    as ratios of medians against unpatched."""
    wls = [wl for (v, wl) in cells if v == venue]
    labels = [l for l in order if any(l in cells[(venue, wl)] for wl in wls)]
    if "unpatched" not in labels or len(wls) < 2:
        return ""
    lines = ["| workload | " + " | ".join(labels) + " |",
             "|---|" + "--:|" * len(labels)]
    for wl in wls:
        cs = cells[(venue, wl)]
        ref = cs.get("unpatched")
        row = [wl]
        for l in labels:
            c = cs.get(l)
            row.append("-" if c is None else "%s / %s" % (
                ratio(c, ref, "iops"), ratio(c, ref, "iothread_cpu_ms_per_kio")))
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def plot(cells, order, title, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [("iops", "IOPS"), ("lat_mean_us", "mean latency (us)"),
              ("iothread_cpu_ms_per_kio", "IOThread CPU (ms per 1000 I/O)"),
              ("qemu_cpu_ms_per_kio", "QEMU CPU (ms per 1000 I/O)")]
    weighted = sorted((weight_of(cells[l].props), l) for l in order
                      if l in cells and weight_of(cells[l].props) is not None)
    others = [l for l in order if l in cells and weight_of(cells[l].props) is None]
    colors = ["tab:red", "tab:green", "tab:purple", "tab:brown", "tab:gray"]
    fig, axes = plt.subplots(2, 2, figsize=(11, 7.5))
    for ax, (key, name) in zip(axes.flat, panels):
        xs, ys, lo, hi, tops = [], [], [], [], [0]
        for w, l in weighted:
            st = cells[l].stat(key)
            if st:
                xs.append(w)
                ys.append(st[0])
                lo.append(st[0] - st[1])
                hi.append(st[2] - st[0])
                tops.append(st[2])
        if xs:
            ax.errorbar(xs, ys, yerr=[lo, hi], fmt="o-", capsize=4,
                        color="tab:blue", label="poll-weight=N (median, min-max)")
        for i, l in enumerate(others):
            st = cells[l].stat(key)
            if not st:
                continue
            col = colors[i % len(colors)]
            tops.append(st[2])
            ax.axhline(st[0], color=col, ls="--", label="%s (median)" % l)
            ax.axhspan(st[1], st[2], color=col, alpha=0.12)
        ax.set_xlim(-0.5, max([4] + [w for w, _ in weighted]) + 0.5)
        ax.set_xticks(range(0, max([4] + [w for w, _ in weighted]) + 1))
        ax.set_xlabel("poll-weight (0 = the default, 3)")
        ax.set_title(name)
        ax.grid(alpha=0.3)
        ax.set_ylim(0, max(tops) * 1.15 or 1)
        if not xs:
            ax.text(0.5, 0.5, "no poll-weight variant measured",
                    transform=ax.transAxes, ha="center", va="center",
                    color="gray")
    h, lab = axes.flat[0].get_legend_handles_labels()
    fig.legend(h, lab, loc="lower center", ncol=4, fontsize=9)
    fig.suptitle(title + "  (shaded: min-max of the reference builds)")
    fig.tight_layout(rect=(0, 0.05, 1, 0.96))
    fig.savefig(path, dpi=90)
    plt.close(fig)


# ---------------------------------------------------- paired statistics

# (key, title, lo, hi, which workloads, against): the targets, as bounds on
# a ratio; "own floor" is stats.floor_of's.
TARGETS = [
    (stats.IO_CPU, "IOThread CPU per I/O vs own floor",
     None, 1.05, "all", "floor"),
    ("iops", "IOPS vs unpatched", 0.95, None, "sat", "unpatched"),
    # the "no worse than unpatched", for CPU and latency too
    (stats.IO_CPU, "IOThread CPU per I/O vs unpatched", None, 1.0, "all",
     "unpatched"),
    ("lat_mean_us", "mean latency vs unpatched", None, 1.05, "rate",
     "unpatched"),
    # a precondition of "keeps 90% of the gain": is there a gain at all?
    ("lat_mean_us", "mean latency vs own floor (polling's gain)",
     None, 1.0, "rate", "floor"),
]
# (key, title, against) of the ratio columns, the targets' first
RATIOS = [
    (stats.IO_CPU, "IOThread CPU/I/O vs own floor", "floor"),
    ("iothread_vcsw_per_kio", "wakeups/I/O vs own floor", "floor"),
    ("iops", "IOPS vs own floor", "floor"),
    ("lat_mean_us", "mean lat vs own floor", "floor"),
    ("iops", "IOPS vs unpatched", "unpatched"),
    (stats.IO_CPU, "IOThread CPU/I/O vs unpatched", "unpatched"),
    ("lat_mean_us", "mean lat vs unpatched", "unpatched"),
]
MEDIANS = [("iops", "IOPS", "%.0f"), ("lat_mean_us", "lat mean us", "%.0f"),
           ("lat_p99_us", "p99 us", "%.0f"),
           (stats.IO_CPU, "IOThread CPU ms/1k I/O (schedstat)", "sig"),
           ("iothread_vcsw_per_kio", "IOThread wakeups/1k I/O", "sig"),
           ("qemu_cpu_ms_per_kio", "QEMU CPU ms/1k I/O", "sig")]


def is_rate(workload):
    return workload.endswith("-rate")


def in_scope(scope, workload):
    return scope == "all" or (scope == "rate") == is_rate(workload)


def by_round(cell):
    """{round: row} of a Cell's measured rows."""
    return {int(r["round"]): r for r in cell.rows} if cell else {}


def host_lines(measured, disturbed, keep_disturbed):
    """The report's lines on what else used the host during the measured
    runs' windows: other processes (and the runs left out for them,
    @disturbed of them unless @keep_disturbed), and the time the
    hypervisor took from the guest's CPUs (steal), where recorded."""
    out = []
    other = [x for x in map(stats.other_pct, measured) if x is not None]
    if other:
        out.append("- CPU of other processes on the host during the "
                   "windows (not QEMU, not fio): median %.0f%%, max %.0f%% "
                   "of one core" % (statistics.median(other), max(other)))
        if max(other) > stats.OTHER_MAX_PCT and keep_disturbed:
            out.append("- **warning: up to %.0f%% of a core went to "
                       "something else during a measured window: another "
                       "job shared the cores, the figures are suspect**" %
                       max(other))
        elif max(other) > stats.OTHER_MAX_PCT:
            out.append("- **%d of %d measured runs left out**: other "
                       "processes took more than %d%% of a core during "
                       "their window (up to %.0f%%); every figure below is "
                       "without them (--keep-disturbed keeps them)" % (
                           disturbed, len(measured), stats.OTHER_MAX_PCT,
                           max(other)))
    steal = [x for x in (stats.pct_of_core(r, "host_steal_ms", "window_s")
                         for r in measured) if x is not None]
    if steal:
        out.append("- steal time during the windows (CPU time the "
                   "hypervisor took from this machine, all CPUs): median "
                   "%.0f%%, max %.0f%% of one core%s" % (
                       statistics.median(steal), max(steal),
                       "" if len(steal) == len(measured) else
                       " (recorded in %d of the %d measured runs)" % (
                           len(steal), len(measured))))
    return out


def reference(label, against, labels):
    """The label a variant is compared with, or None (itself, or none)."""
    ref = stats.floor_of(label, labels) if against == "floor" else "unpatched"
    return None if ref == label or ref not in labels else ref


def ratio_iv(cells, label, key, against):
    ref = reference(label, against, list(cells))
    if ref is None or label not in cells:
        return None
    return stats.interval(stats.paired(by_round(cells[label]),
                                       by_round(cells[ref]), key))


def target_cell(cells, label, workload, t):
    key, _, lo, hi, scope, against = t
    if not in_scope(scope, workload):
        return "-"
    iv = ratio_iv(cells, label, key, against)
    if iv is None:
        return "-"
    return "%s **%s**" % (stats.fmt(iv, 2), stats.verdict(iv, lo, hi))


def paired_tables(cells, order, workload):
    labels = [l for l in order if l in cells]
    hdr = ["variant", "n"] + [t for _, t, _ in MEDIANS] + ["others, % of a core"]
    out = ["Medians over the measured rounds:", "",
           "| " + " | ".join(hdr) + " |",
           "|---|" + "--:|" * (len(hdr) - 1)]
    for l in labels:
        c = cells[l]
        row = [l, str(len(c.rows))]
        for k, _, f in MEDIANS:
            st = c.stat(k)
            row.append(fnum(st[0] if st else None, f))
        o = [x for x in (stats.other_pct(r) for r in c.rows) if x is not None]
        row.append("%.0f (max %.0f)" % (statistics.median(o), max(o)) if o else "-")
        out.append("| " + " | ".join(row) + " |")
    out += ["", "Paired ratios, geometric mean over rounds [95%% t interval]; "
            "own floor: %s:" % ", ".join(
                "%s/%s" % (l, stats.floor_of(l, labels)) for l in labels
                if reference(l, "floor", labels)), ""]
    hdr = ["variant"] + [t for _, t, _ in RATIOS] + [
        "%s, target %s%s" % (t[1], "<= %.2f" % t[3] if t[3] else "",
                             ">= %.2f" % t[2] if t[2] else "")
        for t in TARGETS if in_scope(t[4], workload)]
    out += ["| " + " | ".join(hdr) + " |", "|---|" + "--:|" * (len(hdr) - 1)]
    for l in labels:
        row = [l] + [stats.fmt(ratio_iv(cells, l, k, ag), 2) for k, _, ag in RATIOS]
        row += [target_cell(cells, l, workload, t) for t in TARGETS
                if in_scope(t[4], workload)]
        if all(x == "-" for x in row[1:]):
            continue
        out.append("| " + " | ".join(row) + " |")
    return "\n".join(out)


def spread_table(cells_by_wl, order):
    """Per workload and pair (variant / its floor), the sd of the per-round
    log ratios, the half-width reached and the rounds +-5% would need."""
    out = ["| venue, workload | pair | metric | rounds | sd of log ratio "
           "| half-width | rounds for +-5% |", "|---|---|---|--:|--:|--:|--:|"]
    for (venue, wl), cells in cells_by_wl:
        labels = [l for l in order if l in cells]
        for l in labels:
            ref = reference(l, "floor", labels)
            if ref is None:
                continue
            for key, name in ((stats.IO_CPU, "IOThread CPU/I/O"),
                              ("iops" if not is_rate(wl) else "lat_mean_us",
                               "IOPS" if not is_rate(wl) else "mean latency")):
                rs = stats.paired(by_round(cells[l]), by_round(cells[ref]), key)
                iv = stats.interval(rs)
                if not iv or iv[1] is None:
                    continue
                sd = statistics.stdev([math.log(r) for r in rs])
                need = stats.rounds_for(rs)
                out.append("| %s, %s | %s / %s | %s | %d | %.3f | +-%.1f%% | %s |" % (
                    venue, wl, l, ref, name, iv[3], sd,
                    100 * stats.half_width(iv), need if need else "-"))
    return "\n".join(out)


def summary_verdicts(cells_by_wl, order):
    """One table per target: venues and workloads down, variants across."""
    out = []
    for t in TARGETS:
        key, title, lo, hi, scope, against = t
        rows = [(vw, c) for vw, c in cells_by_wl if in_scope(scope, vw[1])]
        labels = [l for l in order
                  if any(reference(l, against, list(c)) and l in c for _, c in rows)]
        if not rows or not labels:
            continue
        out += ["### %s (target: %s)" % (title, "<= %.2f" % hi if hi else ">= %.2f" % lo),
                "", "| venue, workload | " + " | ".join(labels) + " |",
                "|---|" + "--:|" * len(labels)]
        for (venue, wl), c in rows:
            out.append("| %s, %s | " % (venue, wl) + " | ".join(
                target_cell(c, l, wl, t) for l in labels) + " |")
        out.append("")
    return "\n".join(out)


def ratio_plot(cells, order, title, path):
    """Each variant's ratio to its own floor with its 95% interval: IOThread
    CPU per I/O (target line 1.05), wakeups per I/O, and IOPS (saturating)
    or mean latency (rate-limited)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [l for l in order if l in cells and reference(l, "floor", list(cells))]
    if not labels:
        return False
    wl = title.split(": ", 1)[-1]
    third = ("lat_mean_us", "mean latency") if "-rate" in wl else ("iops", "IOPS")
    panels = [(stats.IO_CPU, "IOThread CPU per I/O", 1.05),
              ("iothread_vcsw_per_kio", "IOThread wakeups per I/O", None),
              (third[0], third[1], None)]
    fig, axes = plt.subplots(1, 3, figsize=(13, 0.45 * len(labels) + 2.2),
                             sharey=True)
    ys = list(range(len(labels)))[::-1]
    for ax, (key, name, target) in zip(axes, panels):
        for y, l in zip(ys, labels):
            iv = ratio_iv(cells, l, key, "floor")
            if not iv:
                continue
            g, lo, hi, n = iv
            col = "tab:orange" if l.startswith("up") else \
                "tab:gray" if l == "unpatched" else "tab:blue"
            if lo is None:
                ax.plot([g], [y], "o", color=col, mfc="none")
            else:
                ax.errorbar([g], [y], xerr=[[g - lo], [hi - g]], fmt="o",
                            color=col, capsize=3)
        ax.axvline(1.0, color="black", lw=0.8)
        if target:
            ax.axvline(target, color="tab:red", ls="--", lw=1,
                       label="target %.2f" % target)
            ax.legend(loc="lower right", fontsize=8)
        ax.set_title("%s / own floor" % name, fontsize=10)
        ax.grid(alpha=0.3, axis="x")
    axes[0].set_yticks(ys)
    axes[0].set_yticklabels(["%s (/%s)" % (l, stats.floor_of(l, labels + list(cells)))
                             for l in labels])
    fig.suptitle(title + "  (geometric mean of per-round ratios, 95% t interval)",
                 fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", nargs="+")
    ap.add_argument("--out", help="where report.md and plots/ go (default "
                    "DIR; required with several)")
    ap.add_argument("--order", default="",
                    help="variant labels in table order (default: as run)")
    ap.add_argument("--no-plots", action="store_true")
    ap.add_argument("--keep-disturbed", action="store_true",
                    help="keep the runs whose window saw other processes "
                    "take more than %d%% of a core (left out by default)"
                    % stats.OTHER_MAX_PCT)
    a = ap.parse_args()
    if a.out is None and len(a.dir) > 1:
        ap.error("--out is required with several runs")
    runs, out_dir = a.dir, a.out or a.dir[0]
    rows = stats.pooled(runs)
    if not rows:
        sys.exit("report.py: no samples in %s" % " ".join(runs))
    cells, seen = group(rows, None if a.keep_disturbed
                        else stats.OTHER_MAX_PCT)
    disturbed = sum(c.disturbed for cs in cells.values() for c in cs.values())
    order = [x for x in a.order.split(",") if x]
    order += [x for x in seen if x not in order]
    meta = {}
    if os.path.exists(os.path.join(runs[0], "meta.json")):
        with open(os.path.join(runs[0], "meta.json")) as f:
            meta = json.load(f)
    if len(runs) > 1:
        meta["pooled"] = "%d runs, their measured rounds numbered on: %s" % (
            len(runs), ", ".join(runs))

    out = ["# poll-weight benchmark", ""]
    for k, v in meta.items():
        out.append("- %s: %s" % (k, v))
    measured = [r for r in rows if int(r["round"]) >= 1]
    out += host_lines(measured, disturbed, a.keep_disturbed)
    out.append("- verdicts and [intervals]: per-round paired ratios, geometric "
               "mean over the rounds, 95% t interval; the min-max tables "
               "further down: medians over the measured rounds, (min-max) "
               "in brackets, ratios of medians; CPU is utime+stime over "
               "fio's I/O window only, summed over the IOThreads")
    out.append("")
    for venue in sorted({v for v, _ in cells}):
        t = summary(cells, order, venue)
        if t:
            out += ["## %s: summary (IOPS / IOThread CPU per I/O, vs unpatched)"
                    % venue, "", t, ""]
    plots = []
    os.makedirs(os.path.join(out_dir, "plots"), exist_ok=True)
    cells_by_wl = list(cells.items())
    out += ["## Verdicts (paired ratios per round, 95% t interval over the "
            "rounds; met: the whole interval within the target, missed: "
            "all outside, not resolved: otherwise)", "",
            summary_verdicts(cells_by_wl, order), "",
            "## Spread of the per-round ratios, and the rounds for +-5%", "",
            spread_table(cells_by_wl, order), ""]
    for (venue, wl), cs in cells.items():
        rate = next((c.rate for c in cs.values() if c.rate), "")
        title = "%s: %s%s" % (venue, wl, " at %s IOPS" % rate if rate else "")
        out += ["## " + title, "", paired_tables(cs, order, wl), "",
                "Medians and min-max:", "", table(cs, order), ""]
        if not a.no_plots:
            p = os.path.join(out_dir, "plots",
                             "ratios-%s-%s.png" % (venue, wl))
            if ratio_plot(cs, order, title, p):
                plots.append(p)
                out += ["![%s, ratios to own floor](plots/%s)" % (
                    title, os.path.basename(p)), ""]
            p = os.path.join(out_dir, "plots", "%s-%s.png" % (venue, wl))
            plot(cs, order, title, p)
            plots.append(p)
            out += ["![%s](plots/%s)" % (title, os.path.basename(p)), ""]
    md = "\n".join(out)
    with open(os.path.join(out_dir, "report.md"), "w") as f:
        f.write(md)
    print(md)
    for p in plots:
        print("plot: " + p)
    print("report: " + os.path.join(out_dir, "report.md"))


if __name__ == "__main__":
    main()
