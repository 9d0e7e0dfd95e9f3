#!/usr/bin/python3
"""Complete traces, the priced replay and its validation against real runs.

  evidence.py convert BENCH_DIR --traces DIR
      For every run of a benchmark output folder that ran with --iter-trace
      (./apw bench --iter-trace), turn the run's iteration trace, over
      fio's I/O window, into a complete trace and the measured figures
      (complete.py).  Writes DIR/<venue>-<workload>-<variant>-r<N>.trace.gz
      and DIR/measured.csv (one row per run: polling time, blocking wakeups
      as the IOThread's voluntary context switches, I/Os).  A venue with
      several IOThreads (guest8x2) gives one trace per IOThread's
      AioContext, ...-r<N>-t1.trace.gz for the busiest and so on, and one
      row per trace; the wakeups, I/Os and CPU in those rows are the
      whole run's (summed over the IOThreads, as the benchmark measures
      them), the polling time is the context's own.

  evidence.py validate --traces DIR --replay TOOL --out DIR2
              [--wakeup-cpu NS --wakeup-latency NS] [--max-error 0.10]
              [--check [METRIC,...]] [--replay-arg OPTION ...]
      Replays every trace through each policy with aio-poll-replay --priced.
      Validation (source 'own', judged): each run's own trace replayed
      through the policy that ran, against what that run measured: polling
      time per I/O (the thread's CPU time in try_poll_mode(), less what its
      iterations that did not poll spent there) and blocking wakeups per
      I/O (the IOThread's voluntary context switches); for a run with
      several traces, the replay's
      figures summed over them.  Closed loop (source 'floor', reported): the
      floor's trace (poll-max-ns=0: arrivals no policy shaped) replayed
      through each policy, against that policy's real run in the same
      venue, workload and round; the difference is how much the policy's
      own completions moved the arrivals.  Writes DIR2/replay-validation.csv
      (trace, policy, metric, predicted, measured, error, judged, source),
      DIR2/replay-priced.csv (every policy and reference on every trace),
      DIR2/replay-lockstep.csv (each run's own trace: in how many
      iterations the replayed policy's polling time equals, or is within
      10% of, the one that the run's policy set) and DIR2/validation.md
      (the tables, and two diagnoses: the judged polling figures with
      each run's own measured cost of entering and leaving poll mode and
      with the median of all runs, and each run's stalls, see
      trace_stalls(), with its error without them).  The cost of entering
      and leaving poll mode that the validation charges a run is the
      median of what the other runs of its venue and workload measured,
      less their stalls (venue_entry()); the priced tables charge every
      trace the median of all runs.  With --check, exits 1 if a judged
      error of a METRIC (polling_ns_per_io, wakeups_per_io; both if none
      is named) is over --max-error.

  evidence.py sensitivity --traces DIR --replay TOOL --out DIR2
              [--wakeup-cpu NS --wakeup-latency NS] [--entries LIST]
      The priced replay of every trace at each cost of entering and leaving
      poll mode in LIST (ns, or 'median': what the validation charges, the
      median of the runs less their stalls; default 0,median,3000,7000:
      the runs measured up to 7.0 us with their stalls): per kind of trace
      (floor, own: patches 1-13's runs, other), the least and largest ratio
      of patches 1-13's CPU to 10.2.2's, the upstream-equivalent policy's,
      the optimum's and the best fixed polling time's, and of its added
      latency to 10.2.2's.  Writes DIR2/replay-entry-sensitivity.csv.

  evidence.py rounds --traces DIR --wakeup-cpu NS --wakeup-latency NS
              --out FILE [--priced CSV]
      The runs' own measures, priced, compared round by round: per run,
      CPU = its polling (as the validation measures it) + its blocking
      wakeups x NS of CPU, and added latency = its wakeups x NS of
      latency, per I/O; per venue and workload, the paired ratios of
      patches 1-13 ('new') to 10.2.2, to the upstream-equivalent policy
      at weight 3 ('w3') and to the floor, over the rounds, with 95%
      intervals and the verdicts of the replay's targets (CPU at most
      1.00x 10.2.2's and w3's, latency at most 1.05x 10.2.2's).  With
      --priced (validate's replay-priced.csv at the same price), also each
      run of 'new' over the offline optimum and the best fixed polling
      time of its own trace.  --traces (and --priced) more than once pool
      recordings: each round paired within its recording, each
      recording's runs priced at its own NS (a comma list, one per
      --traces) or all at one.  Writes FILE (markdown) and FILE with .csv
      for .md.

  validate, sensitivity, timeout0, calibrated, pending, arrivals,
  bounds, context, constants and bandit pass each --replay-arg on to every
  replay (e.g. --replay-arg=--no-after-recorded: the replay before
  2026-12-04).

  evidence.py replicate FIRST SECOND --out FILE
      Two recordings' rounds.csv, judged the same way, cell by cell: a
      verdict of FIRST is replicated, not contradicted (SECOND does not
      resolve the cell) or contradicted (met against missed) by SECOND's.
      Writes FILE (markdown).

  evidence.py timeout0 --traces DIR --replay TOOL --out DIR2
              [--wakeup-cpu NS --wakeup-latency NS]
      Every trace replayed without and with --timeout0-rule (patches
      1-13's policy leaving out the waits whose timeout was 0, which no
      polling time can change; not a patch yet): per venue, workload and
      kind of trace, how many traces it changes and patches 1-13's
      largest ratios to the best fixed polling time, the optimum and
      10.2.2, before and after.  Writes DIR2/timeout0.md.

  evidence.py arrivals --traces DIR --replay TOOL --out DIR2
              [--wakeup-cpu NS --wakeup-latency NS]
      For traces recorded with the kernel's wakeups (`./apw evidence
      --sched-wakeups`: each slept wait's arrive_ns): every trace replayed
      with the events of slept waits where the kernel woke the thread,
      and with them at the wait's end less the price's latency
      (--no-arrivals, how every earlier recording was replayed); per
      venue, workload and kind of trace, the range of patches 1-13's
      ratios to the optimum, the best fixed polling time and 10.2.2, each
      way, and the wakeup latency the slept waits measured (the traces'
      wakeups.csv).  Writes DIR2/arrivals.md.

  evidence.py calibrated --traces DIR --replay TOOL --out DIR2
              [--wakeup-cpu NS --wakeup-latency NS]
      The same for patches 1-13's policy with its wakeup constants
      (AIO_POLL_WAKEUP_NS, AIO_POLL_WAKEUP_LATENCY_NS) set to the price,
      as a build calibrated to the host that recorded the traces would
      have them (aio-poll-replay --policy-wakeup-cpu and
      --policy-wakeup-latency; not a patch).  Writes DIR2/calibrated.md.

  evidence.py pending --traces DIR --replay TOOL --out DIR2
              [--cut | --idle [--notifier H]] [--calibrate]
              [--wakeup-cpu NS --wakeup-latency NS]
      As timeout0, for --pending-rule (patches 1-15's policy leaving out
      the waits that neither slept nor ended by polling: their event was
      there when the fd wait began, so no polling time changes their cost;
      not a patch, and aio_poll() cannot tell them all), or with --cut for
      --cut-rule (only those whose polling ended early without progress:
      need_wait(), or aio_notify() caught; aio_poll() can tell them), or
      with --idle for --idle-rule (the waits in which nothing ran while no
      timer was due; --notifier H: handler H of the traces --only picks
      is the AioContext's notifier, --notifier auto: found in each trace);
      with --calibrate, before and after with the policy's wakeup
      constants set to the price.  Writes DIR2/pending.md (pending-cut.md,
      pending-idle.md, pending-idle-notifierH.md or -notifierauto.md; -cpu
      before .md with --calibrate).

  evidence.py bounds --traces DIR --replay TOOL --out DIR2
              [--wakeup-cpu NS --wakeup-latency NS]
      Every trace replayed with the clairvoyant references
      (aio-poll-replay --clairvoyant: the best fixed polling time in
      hindsight for each class of waits, by what a rule could know of
      the waits before): per venue, workload and kind of trace, the
      range of each one's CPU, 10.2.2's and patches 1-13's over the
      optimum's, and of patches 1-13's over the least of them.  Writes
      DIR2/bounds.md and DIR2/bounds.csv.

  evidence.py context --traces DIR --replay TOOL --out DIR2
              [--classes K] [--calibrate] [--sees-arrivals]
              [--wakeup-cpu NS --wakeup-latency NS]
      As timeout0, for --context-rule K (default 16: patches 1-13's
      policy with a histogram for each position after the last wait
      longer than a wakeup's CPU; not a patch); with --calibrate, also
      with the policy's price of a wakeup's CPU set to NS; with
      --sees-arrivals, also told when the event of each slept wait came
      (--policy-sees-arrivals).  Writes DIR2/context.md (context-cpu.md,
      context-arrivals.md, context-cpu-arrivals.md).

  evidence.py constants --traces DIR --replay TOOL --out DIR2
              [--cpu NS,NS...] [--latency NS,NS...] [--only REGEX]
              [--wakeup-cpu NS --wakeup-latency NS]
      Every trace replayed with patches 1-13's policy at each pair of
      wakeup constants of the grid --cpu x --latency in place of the
      tree's (--policy-wakeup-cpu, --policy-wakeup-latency; not a
      patch): per pair, on how many traces its CPU is above 10.2.2's,
      above patches 1-8's, and its added latency above 1.05x 10.2.2's,
      each with the largest ratio.  Writes DIR2/constants.md.

  evidence.py bandit --traces DIR --replay TOOL --out DIR2
              [--every K,K...] [--near PCT,PCT...] [--classes N,N...]
              [--hybrid [--count-all]] [--only REGEX]
              [--rule-wakeup-cpu NS] [--rule-max NS]
              [--wakeup-cpu NS --wakeup-latency NS]
      Every trace replayed with the position rule that learns from the
      cost each polling time was seen to have (aio-poll-replay --bandit;
      no event times needed; not a patch), its times up to --wakeup-cpu
      and its price of a wakeup set to it, for each triple of the grid
      --every x --near x --classes: as constants, and on how many traces
      its CPU is above 1.25x the optimum's, the largest ratio, and its
      range over the NBD traces at QD8; the first row is the policy
      without it.  Writes DIR2/bandit.md.  With --hybrid, the rule only
      where an fd without io_poll() ends most waits of a position, the
      policy's one histogram (the tree's constants) elsewhere
      (--bandit-hybrid --bandit-wakeup-cpu): DIR2/bandit-hybrid.md;
      with --count-all too, that histogram counts every wait, as patches
      1-15's does (--bandit-count-all): DIR2/bandit-hybrid-all.md.
      --rule-wakeup-cpu gives the rule a price of its own (a patch would
      have the tree's constant, not the host's), --rule-max the longest
      time it plays (default: its price); each adds -ruleNS or -maxNS
      to the file's name.

  evidence.py merge MEASURED NEW
      Replaces the rows of MEASURED (a measured.csv) whose venue NEW has
      by NEW's rows, keeping the others (./apw evidence --add).

Policies and the variants of their real runs: unpatched = 10.2.2's policy
(variant 'unpatched'), series-wN = the series' upstream-equivalent patches
1-8 at poll-weight N ('wN'), new-w3 = the whole series (patches 9-10's policy)
at the default weight ('new'), never-poll = the floor itself ('floor').
"""

import argparse
import collections
import concurrent.futures
import csv
import functools
import gzip
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
COMPLETE = os.path.join(HERE, "complete.py")
sys.path.insert(0, os.path.join(HERE, "..", "bench"))
from run import GUEST_VENUES  # noqa: E402 (the venues and their IOThreads)
import stats  # noqa: E402 (paired ratios over rounds)

# policy name in aio-poll-replay --priced -> benchmark variant of its run
POLICY_VARIANT = {"never-poll": "floor", "unpatched": "unpatched",
                  "series-w1": "w1", "series-w2": "w2", "series-w3": "w3",
                  "series-w4": "w4", "new-w3": "new"}
MEASURED_FIELDS = ["venue", "workload", "variant", "round", "ios",
                   "iterations", "polling_ns", "polling_overhead_ns",
                   "polling_cpu_ns", "polling_cpu_overhead_ns",
                   "polled_iterations", "poll_entry_ns",
                   "caught", "slept", "vcsw", "iops", "lat_mean_us",
                   "iothread_cpu_ms", "trace", "cpu_base_ns",
                   "host_steal_ms", "full_polls", "full_poll_excess_ns"]
VARIANT_POLICY = {v: p for p, v in POLICY_VARIANT.items()}


def policy_runs(traces):
    """the rows of @traces/measured.csv of the variants that a policy of
    the replay models"""
    with open(os.path.join(traces, "measured.csv")) as f:
        return [r for r in csv.DictReader(f)
                if r["variant"] in VARIANT_POLICY]


def trace_name(row):
    return "%s-%s-%s-r%s" % (row["venue"], row["workload"], row["variant"],
                             row["round"])


def venue_iothreads(venue):
    return GUEST_VENUES[venue][1] if venue in GUEST_VENUES else 1


def run_key(row):
    return (row["venue"], row["workload"], row["variant"], row["round"])


def group_runs(measured):
    """{run key: [rows]}: one row per trace, several for a run of a venue
    with several IOThreads"""
    runs = {}
    for r in measured:
        runs.setdefault(run_key(r), []).append(r)
    return runs


def sum_rows(rows):
    """priced replay rows of a run's traces, summed, with the run's I/Os"""
    out = {f: sum(int(x[f]) for x in rows)
           for f in ("polling_ns", "wakeups", "cpu_ns", "added_latency_ns")}
    out["ios"] = int(rows[0]["ios"])
    return out


def summed(by, parts, policy):
    """the replay's figures for @policy summed over the traces of a run's
    rows, and its I/Os; None if a trace has no such row"""
    rows = [by.get((r["trace"], policy)) for r in parts]
    if not all(rows):
        return None
    return sum_rows(rows)


def convert_one(a, row, log, k, n):
    """the trace of the k-th busiest of the run's n IOThreads' AioContexts
    and its row of measured.csv"""
    name = trace_name(row) + ("-t%d" % (k + 1) if n > 1 else "")
    out = os.path.join(a.traces, name + ".trace.gz")
    js = os.path.join(a.traces, name + ".json")
    # 10.2.2's runs: the polling time of handlers without events
    idle = ["--idle-poll"] if row["variant"] == "unpatched" else []
    # --sched-wakeups: the events' own times (the file holds the wakeups
    # of every IOThread of the run; complete.py finds the AioContext's)
    wakes = os.path.join(os.path.dirname(log), "sched-wakeups.txt")
    # (a run whose wakeups do not say which thread ran this AioContext
    # gets its trace without them: its slept waits' events placed at the
    # end less the price's latency, as before --sched-wakeups)
    wake = ["--wakeups", wakes, "--wakeups-if-known"] \
        if os.path.exists(wakes) else []
    part = (["--ctx-rank", str(k), "--header",
             "IOThread %d of %d by blocking iterations; I/Os, wakeups and "
             "CPU below are the whole run's" % (k + 1, n)] if n > 1 else [])
    subprocess.run(
        [sys.executable, COMPLETE, log, "--out", out, "--json", js,
         "--window", row["window_t0"], row["window_t1"],
         "--ios", row["ios"], "--sleep-ns", str(a.sleep_ns)] + idle +
        wake +
        ["--header", "%s %s, variant %s (%s), round %s: %s IOPS, "
         "mean latency %s us" % (row["venue"], row["workload"],
                                 row["variant"], row["props"] or
                                 "defaults", row["round"],
                                 row["iops"], row["lat_mean_us"])] +
        part, check=True)
    with open(js) as f:
        m = json.load(f)
    os.unlink(js)
    if wake and not m["wakeups"]:
        print("evidence.py: %s: without the kernel's wakeups" % name,
              file=sys.stderr)
    elif wake:
        wake_row(a.traces, name, m)
    return {
        "venue": row["venue"], "workload": row["workload"],
        "variant": row["variant"], "round": row["round"],
        "ios": row["ios"], "iterations": m["iterations"],
        "polling_ns": m["polling_ns"], "polling_overhead_ns": 0,
        "polling_cpu_ns": "" if m["polling_cpu_ns"] is None
        else m["polling_cpu_ns"], "polling_cpu_overhead_ns": "",
        "polled_iterations": m.get("polled_iterations", 0),
        "poll_entry_ns": "" if m.get("poll_entry_ns") is None
        else m["poll_entry_ns"],
        "caught": m["caught"], "slept": m["slept"],
        "vcsw": int(float(row["iothread_vcsw"])),
        "iops": row["iops"], "lat_mean_us": row["lat_mean_us"],
        "iothread_cpu_ms": row["iothread_cpu_ms"],
        "trace": name + ".trace.gz",
        "cpu_base_ns": "" if m["polling_cpu_ns"] is None
        else m["cpu_base_ns"],
        # the hypervisor's steal time over the window, all CPUs (runs
        # recorded before 2026-12-03 have none)
        "host_steal_ms": row.get("host_steal_ms", ""),
        # the waits that polled for their whole time (full_entry(); rows
        # converted before 2026-12-06, late evening, have none)
        "full_polls": m.get("full_polls", ""),
        "full_poll_excess_ns": "" if m.get("full_poll_excess_ns") is None
        else m["full_poll_excess_ns"]}


WAKE_FIELDS = ["trace", "slept", "found", "multi", "latency_p10_ns",
               "latency_p50_ns", "latency_p90_ns"]


def wake_row(traces, name, m):
    """append a run's sched_waking figures (complete.py's) to
    @traces/wakeups.csv"""
    path = os.path.join(traces, "wakeups.csv")
    new = not os.path.exists(path)
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=WAKE_FIELDS)
        if new:
            w.writeheader()
        w.writerow({"trace": name + ".trace.gz", "slept": m["slept"],
                    "found": m["wake_found"], "multi": m["wake_multi"],
                    "latency_p10_ns": m["wake_latency_p10_ns"],
                    "latency_p50_ns": m["wake_latency_p50_ns"],
                    "latency_p90_ns": m["wake_latency_p90_ns"]})


def convert(a):
    os.makedirs(a.traces, exist_ok=True)
    if os.path.exists(os.path.join(a.traces, "wakeups.csv")):
        os.unlink(os.path.join(a.traces, "wakeups.csv"))
    rows = []
    with open(os.path.join(a.bench, "samples.csv")) as f:
        for row in csv.DictReader(f):
            if row["status"] != "ok" or int(row["round"]) < 1:
                continue
            log = os.path.join(a.bench, "raw", "%s-r%s-%s-a%s" % (
                row["venue"], row["round"], row["variant"], row["attempt"]),
                "iter-trace.log")
            if not os.path.exists(log):
                sys.exit("evidence.py: no %s (run the benchmark with "
                         "--iter-trace)" % log)
            n = venue_iothreads(row["venue"])
            for k in range(n):
                rows.append(convert_one(a, row, log, k, n))
    # try_poll_mode() and the code before it take time even when nothing
    # is polled: the floor's time per iteration there is that overhead,
    # and is taken off every run's polling time of the same venue and
    # workload
    # (from the floor run of the same round: the host's noise drifts
    # between rounds by about as much as the overhead itself)
    for key in ("polling_ns", "polling_cpu_ns"):
        floor = {}
        for r in rows:
            if r["variant"] == "floor" and r[key] != "":
                floor.setdefault((r["venue"], r["workload"], r["round"]),
                                 []).append(r[key] / r["iterations"])
        for r in rows:
            f = floor.get((r["venue"], r["workload"], r["round"]))
            if f and r[key] != "":
                r[key.replace("_ns", "_overhead_ns")] = \
                    int(sum(f) / len(f) * r["iterations"])
    with open(os.path.join(a.traces, "measured.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=MEASURED_FIELDS)
        w.writeheader()
        w.writerows(rows)
    print("evidence.py: %d runs converted into %s" % (len(rows), a.traces))


def run_stalls(traces, r):
    """trace_stalls() of a row's trace, in folder @traces"""
    return trace_stalls(os.path.join(traces, r["trace"]))


def full_entry(r):
    """the cost of entering and leaving poll mode that a trace's run
    measured on its waits that polled for their whole time and caught
    nothing (complete.py's full_poll_excess_ns: the median of their CPU
    time in try_poll_mode() less that time) less the base that every
    iteration pays (cpu_base_ns; where every iteration polled, the floor's
    time per iteration, as measured_polling() takes it).  The polling time
    runs from aio_poll()'s start, so the checks before polling are inside
    it, and the cost is negative where they cost more than entering and
    leaving (on the Intel host of 2026-12-06, -130 to -200 ns).  None where
    the row has no such figure (rows converted before 2026-12-06, late
    evening) or fewer than 100 such waits: then measured_entry() takes
    complete.py's poll_entry_ns, which averages over the waits whose
    polling was cut too, and counts a negative cost as 0"""
    if r.get("full_poll_excess_ns", "") in ("", None) or \
            int(r.get("full_polls") or 0) < 100:
        return None
    if r.get("cpu_base_ns", "") not in ("", None):
        base = int(r["cpu_base_ns"])
    elif r.get("polling_cpu_overhead_ns", "") not in ("", None):
        base = round(int(r["polling_cpu_overhead_ns"]) / int(r["iterations"]))
    else:
        return None
    return int(r["full_poll_excess_ns"]) - base


def measured_entry(r):
    """what a trace's run measured of entering and leaving poll mode:
    full_entry() where it has it; else complete.py's poll_entry_ns, per
    iteration that polled and caught nothing (CPU time, stalls included),
    None where it polled in fewer than 100 iterations"""
    e = full_entry(r)
    if e is not None:
        return e
    if r.get("poll_entry_ns", "") == "" or int(r["polled_iterations"]) < 100:
        return None
    return int(r["poll_entry_ns"])


def stall_free_entry(traces, r):
    """what a trace's run measured of entering and leaving poll mode per
    iteration that polled and caught nothing (complete.py's poll_entry_ns,
    CPU time), less its stalls per such iteration, which the replay charges
    by themselves (wall-clock time, at least what the thread's CPU clock
    counted for them, so this can take off too much where the thread was
    preempted); None where it polled in fewer than 100 iterations.  Where
    the run has full_entry(), that: a median, which the few stalled waits
    do not move"""
    e = measured_entry(r)
    if e is None or full_entry(r) is not None:
        return e
    return e - run_stalls(traces, r)[0] // int(r["polled_iterations"])


def charged_entry(traces, r, stalls=True):
    """the cost of entering and leaving poll mode that the replay may charge
    for a trace's run: stall_free_entry() (with @stalls False,
    measured_entry(), stalls included, as the replay charged it until
    2026-12-02), 0 where negative but from full_entry() (a recording whose
    few polling runs were mostly stalled, or whose cut waits pulled
    poll_entry_ns below 0); None where the run has none.  Taking 0 for
    each negative figure gives the same medians as taking 0 for a negative
    median, as the replay did before full_entry()"""
    e = stall_free_entry(traces, r) if stalls else measured_entry(r)
    if e is None or full_entry(r) is not None:
        return e
    return max(e, 0)


def poll_entry(measured, traces, stalls=True):
    """the CPU of entering and leaving poll mode: the median over the traces
    that polled in at least 100 iterations of what each measured
    (charged_entry()); 0 where none did"""
    e = sorted(x for x in (charged_entry(traces, r, stalls)
                           for r in measured) if x is not None)
    return e[len(e) // 2] if e else 0


def venue_entry(traces, measured, run, entry):
    """the cost of entering and leaving poll mode that the validation
    charges the traces of @run (its rows of @measured): the median of what
    the other runs of the same venue and workload measured, less their
    stalls (charged_entry(); both rounds, every policy); @entry where none
    of them polled in 100 iterations or more.
    The cost is the venue's (two IOThreads and a vCPU on two CPUs pay
    several times what one IOThread pays), and the run's own figure is
    left out, so that no prediction comes from the run it is judged
    against"""
    own = {r["trace"] for r in run}
    e = sorted(x for x in (charged_entry(traces, r) for r in measured
                           if r["venue"] == run[0]["venue"] and
                           r["workload"] == run[0]["workload"] and
                           r["trace"] not in own)
               if x is not None)
    return e[len(e) // 2] if e else entry


def replay(a, traces, entry, extra=()):
    """the priced replay of @traces, and its lockstep rows (how often the
    replay's polling time equals the one that the recorded run set).  The
    traces are independent: one process per CPU, each on a consecutive
    share of them, their rows joined in the order of @traces"""
    n = max(1, min(os.cpu_count() or 1, len(traces)))
    procs = []
    for k in range(n):
        lockstep = os.path.join(a.out, "lockstep-%d.csv" % k)
        out = open(os.path.join(a.out, "priced-%d.csv" % k), "w+")
        share = traces[k * len(traces) // n:(k + 1) * len(traces) // n]
        procs.append((subprocess.Popen(
            [a.replay, "--priced", "--weights", "1,2,3,4", "--wakeup-cpu",
             str(a.wakeup_cpu), "--wakeup-latency", str(a.wakeup_latency),
             "--poll-entry", str(entry), "--lockstep", lockstep] +
            list(extra) + share,
            cwd=a.traces, stdout=out), out, lockstep))
    priced, steps = [], []
    for proc, out, lockstep in procs:
        if proc.wait():
            raise subprocess.CalledProcessError(proc.returncode, a.replay)
        out.seek(0)
        priced += list(csv.DictReader(out))
        out.close()
        os.unlink(out.name)
        with open(lockstep, newline="") as f:
            steps += list(csv.DictReader(f))
        os.unlink(lockstep)
    return priced, steps


def check_stalls(a, steps):
    """the stalls that the replay found in each trace (its --lockstep rows)
    must be trace_stalls()'s, which the cost of entering and leaving poll
    mode is computed with: the two are written out twice, in C and here"""
    for r in steps:
        mine = trace_stalls(os.path.join(a.traces, r["trace"]))
        theirs = (int(r["stalled_ns"]), int(r["stalls"]))
        if mine != theirs:
            sys.exit("evidence.py: %s: the replay finds stalls %s, "
                     "trace_stalls() %s" % (r["trace"], theirs, mine))


def write_lockstep(a, measured, steps):
    """replay-lockstep.csv and a section of validation.md: each run's own
    trace, its policy's replayed polling time against the one that the run
    set, iteration by iteration"""
    own = {(r["trace"], VARIANT_POLICY[r["variant"]]) for r in measured}
    rows = [r for r in steps if (r["trace"], r["policy"]) in own
            and r["policy"] != "never-poll"]
    rows.sort(key=lambda r: r["trace"])
    fields = ["trace", "policy", "compared", "agreed", "within_10pct",
              "need_wait_inferred"]
    with open(os.path.join(a.out, "replay-lockstep.csv"), "w",
              newline="") as f:
        w = csv.writer(f)
        w.writerow(fields)
        for r in rows:
            w.writerow([r["trace"].replace(".trace.gz", "")] +
                       [r[k] for k in fields[1:]])
    return rows


def rel_error(pred, meas):
    if meas == 0:
        return 0.0 if pred == 0 else float("inf")
    return (pred - meas) / meas


def measured_polling(run):
    """polling time of a run: the thread's CPU time in try_poll_mode() less
    what the same run's iterations that did not poll spent there
    (cpu_base_ns per iteration: clock reads, need_wait(), the checks
    before polling), which is also what the replay's cost of entering and
    leaving poll mode is measured against; in recordings without
    cpu_base_ns, less what the floor of the same round spent there; in
    traces without CPU time, the wall-clock time from aio_poll()'s start
    to the end of polling, less the floor's"""
    if run.get("polling_cpu_ns", "") != "":
        if run.get("cpu_base_ns", "") not in ("", None):
            return int(run["polling_cpu_ns"]) - \
                int(run["iterations"]) * int(run["cpu_base_ns"])
        return int(run["polling_cpu_ns"]) - \
            int(run["polling_cpu_overhead_ns"] or 0)
    return int(run["polling_ns"]) - int(run["polling_overhead_ns"])


# the figures that the validation compares, per I/O of a run: {metric:
# (its prediction from the replay's figures summed over a run's traces
# and the I/Os they hold, what the run measured from its rows and I/Os)}
METRIC_FIGURES = {
    "polling_ns_per_io": (
        lambda pred, ios: pred["polling_ns"] / ios,
        lambda run, ios: sum(measured_polling(r) for r in run) / ios),
    "wakeups_per_io": (
        lambda pred, ios: pred["wakeups"] / ios,
        lambda run, ios: int(run[0]["vcsw"]) / ios),
}
METRICS = tuple(METRIC_FIGURES)


def check_metrics(text):
    """--check's argument: a comma list of METRICS"""
    names = [m for m in text.split(",") if m]
    bad = [m for m in names if m not in METRICS]
    if bad or not names:
        raise argparse.ArgumentTypeError(
            "not a list of %s: %r" % (", ".join(METRICS), text))
    return names


def over_limit(worst, metrics, limit):
    """the @metrics (--check's) whose largest judged error in @worst
    ({metric: fraction}) is over @limit"""
    return [m for m in metrics if worst[m] > limit]


def compare(vrows, trace, policy, source, pred_run, ios, run):
    """append one comparison per METRICS of a prediction (the replay's
    figures over @ios I/Os, summed over a run's traces) with a real run
    (its rows, one per trace); returns {metric: its judged error, as a
    fraction}, without the metrics that are not judged"""
    worst = {}
    rios = int(run[0]["ios"])
    for metric, (predicted, measured) in METRIC_FIGURES.items():
        pred, meas = predicted(pred_run, ios), measured(run, rios)
        err = rel_error(pred, meas)
        # Only the replay of a run's own trace is judged: the floor's
        # trace replayed through a policy also carries the closed loop (the
        # policy's real run had other arrivals), which is reported.
        # Polling of under 1 us per I/O is below what the trace can tell
        # from try_poll_mode()'s own overhead, whose per-I/O figure moves
        # by up to 0.5 us between floor runs: not judged.
        judged = source == "own" and not (
            metric == "polling_ns_per_io" and max(pred, meas) < 1000)
        if judged:
            worst[metric] = abs(err)
        vrows.append({"trace": trace, "policy": policy, "metric": metric,
                      "predicted": round(pred, 4),
                      "measured": round(meas, 4),
                      "error": round(err, 4) if err != float("inf")
                      else "inf", "judged": int(judged), "source": source})
    return worst


def validate(a):
    measured = policy_runs(a.traces)
    runs = group_runs(measured)
    if not any(r["variant"] == "floor" for r in measured):
        sys.exit("evidence.py: no floor runs in %s" % a.traces)
    entry = poll_entry(measured, a.traces)
    print("evidence.py: entering and leaving poll mode costs %d ns "
          "(median of the runs, less their stalls; the validation charges "
          "each run its venue's, venue_entry())" % entry)
    os.makedirs(a.out, exist_ok=True)
    priced, steps = replay(a, [r["trace"] for r in measured], entry,
                           a.replay_arg)
    check_stalls(a, steps)
    steps = write_lockstep(a, measured, steps)
    with open(os.path.join(a.out, "replay-priced.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["trace", "policy", "wakeup_cost_ns", "polling_ns",
                    "wakeups", "cpu_ns", "added_latency_ns",
                    "optimum_cpu_ns", "wakeup_latency_ns", "ios",
                    "fixed_poll_ns"])
        for p in priced:
            pol = {"unpatched": "unpatched", "series-w3": "series",
                   "new-w3": "new"}.get(
                p["policy"], p["policy"])
            w.writerow([p["trace"].replace(".trace.gz", ""), pol,
                        p["wakeup_cost_ns"], p["polling_ns"], p["wakeups"],
                        p["cpu_ns"], p["added_latency_ns"],
                        p["optimum_cpu_ns"], p["wakeup_latency_ns"],
                        p["ios"], p["fixed_poll_ns"]])
    by = {(p["trace"], p["policy"]): p for p in priced}
    ventry, own = own_replays(a, measured, runs, entry)
    vrows, worst = [], dict.fromkeys(METRICS, 0.0)
    for key, parts in runs.items():
        venue, wl, variant, rnd = key
        name = trace_name(parts[0])
        for policy, pvariant in POLICY_VARIANT.items():
            pred = summed(by, parts, policy)
            if pred is None:
                continue
            if pvariant == variant:
                # the policy's own run: the replay of its trace against
                # it, at its venue's cost of entering poll mode
                errs = compare(vrows, name, policy, "own",
                               own.get(key, pred), int(parts[0]["ios"]),
                               parts)
                for metric, err in errs.items():
                    worst[metric] = max(worst[metric], err)
            elif variant == "floor":
                run = runs.get((venue, wl, pvariant, rnd))
                if run:
                    compare(vrows, name, policy, "floor", pred,
                            int(parts[0]["ios"]), run)
    vrows.sort(key=lambda r: (r["source"] != "own", r["trace"],
                              r["policy"], r["metric"]))
    with open(os.path.join(a.out, "replay-validation.csv"), "w",
              newline="") as f:
        w = csv.DictWriter(f, fieldnames=["trace", "policy", "metric",
                                          "predicted", "measured", "error",
                                          "judged", "source"])
        w.writeheader()
        w.writerows(vrows)
    full = any(full_entry(r) is not None for r in measured)
    with open(os.path.join(a.out, "validation.md"), "w") as f:
        for source, title in (
                ("own", "Each run's own trace replayed through its policy "
                 "(judged), at the cost of entering and leaving poll mode "
                 "that the other runs of its venue and workload measured "
                 "(their median, less their stalls%s)" % (
                     "; measured on the waits that polled for their whole "
                     "time, less the base, negative too: full_entry()"
                     if full else "")),
                ("floor", "The floor's trace replayed through each policy, "
                 "against that policy's run in the same round (the closed "
                 "loop included; not judged)")):
            f.write("%s\n\n| trace | policy | metric | predicted | "
                    "measured | error |\n|---|---|---|--:|--:|--:|\n" % title)
            for r in vrows:
                if r["source"] != source:
                    continue
                e = r["error"]
                f.write("| %s | %s | %s | %s | %s | %s%s |\n" % (
                    r["trace"], r["policy"], r["metric"], r["predicted"],
                    r["measured"],
                    "%+.1f%%" % (100 * e) if e != "inf" else e,
                    "" if r["judged"] or source != "own"
                    else " (not judged)"))
            f.write("\n")
        # the replay's own count of the iterations it does not compare
        skipped = {r["skipped"] for r in steps}
        f.write("Lockstep: each run's own trace; of the iterations after "
                "the first %s, how many recorded the polling time that "
                "the run's policy set, and the share in which the "
                "replay's equals it or is within 10%% of it (waits taken "
                "for ones the fd monitor kept from polling: see "
                "harness/replay/README.md)\n\n" % "/".join(sorted(skipped)))
        f.write("| trace | policy | iterations | equal | within 10% | "
                "waits taken for need_wait() ones |\n"
                "|---|---|--:|--:|--:|--:|\n")
        for r in steps:
            n = max(int(r["compared"]), 1)
            f.write("| %s | %s | %s | %.3f | %.3f | %s |\n" % (
                r["trace"].replace(".trace.gz", ""), r["policy"],
                r["compared"], int(r["agreed"]) / n,
                int(r["within_10pct"]) / n, r["need_wait_inferred"]))
        f.write("\n")
        f.write(entry_diagnosis(a, runs, vrows, entry, ventry, by))
        f.write(stall_diagnosis(a, runs, vrows,
                                poll_entry(measured, a.traces, False)))
    write_priced_md(a, measured, priced)
    print("evidence.py: %d comparisons, largest judged error %s; "
          "wrote %s" % (len(vrows), ", ".join(
              "%.1f%% (%s)" % (100 * worst[m], m) for m in METRICS), a.out))
    over = over_limit(worst, a.check, a.max_error)
    if over:
        print("evidence.py: FAIL: an error of %s is over %.0f%%" %
              (" and ".join(over), 100 * a.max_error))
        return 1
    return 0


def own_replays(a, measured, runs, entry):
    """({run key: venue_entry()}, {run key: its policy's figures in the
    replay of its own traces at that cost, summed over them}) for every
    run of a policy that polls (the floor's never-poll pays no such cost:
    its figures are the main replay's)"""
    ventry = {key: venue_entry(a.traces, measured, parts, entry)
              for key, parts in runs.items()}
    todo = [(key, parts, VARIANT_POLICY[key[2]])
            for key, parts in sorted(runs.items())
            if VARIANT_POLICY[key[2]] != "never-poll"]
    # one replay process per CPU at a time
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        futures = [[pool.submit(replayed_row, a, r["trace"], policy,
                                ventry[key]) for r in parts]
                   for key, parts, policy in todo]
    own = {key: sum_rows([f.result() for f in fs])
           for (key, parts, policy), fs in zip(todo, futures)}
    return ventry, own


def run_entry(traces, r, entry):
    """the cost of entering and leaving poll mode that a trace's own run
    measured, less its stalls (stall_free_entry()), where it polled in at
    least 100 iterations; else @entry.  A negative figure (the run's
    iterations that did not poll cost more there than those that polled,
    beyond their polling and stalls) counts as 0, but from full_entry()
    (charged_entry())"""
    e = charged_entry(traces, r)
    return entry if e is None else e


def replayed_row(a, trace, policy, entry, stalls=True):
    """the row of @policy (not never-poll) in the priced replay of @trace,
    charging @entry ns per iteration that polls, and the trace's stalls
    unless @stalls is False"""
    weight = policy.rsplit("-w", 1)[1] if "-w" in policy else "3"
    out = subprocess.run(
        [a.replay, "--priced", "--no-references", "--weights", weight,
         "--wakeup-cpu", str(a.wakeup_cpu), "--wakeup-latency",
         str(a.wakeup_latency), "--poll-entry", str(entry)] +
        ([] if stalls else ["--no-stalls"]) +
        a.replay_arg + [trace],
        cwd=a.traces, check=True, capture_output=True, text=True)
    return next(x for x in csv.DictReader(out.stdout.splitlines())
                if x["policy"] == policy)


def replayed_polling(a, trace, policy, entry, stalls=True):
    """the polling time of @policy's replay of @trace (replayed_row())"""
    return int(replayed_row(a, trace, policy, entry, stalls)["polling_ns"])


def judged_polling(runs, vrows):
    """[(a run's rows, its policy, its judged polling row of @vrows)], in
    the order of the runs' keys"""
    judged = {(r["trace"], r["policy"]): r for r in vrows
              if r["judged"] and r["source"] == "own" and
              r["metric"] == "polling_ns_per_io"}
    todo = []
    for key, parts in sorted(runs.items()):
        policy = VARIANT_POLICY[key[2]]
        v = judged.get((trace_name(parts[0]), policy))
        if v:
            todo.append((parts, policy, v))
    return todo


def replayed_judged(a, todo, entry_of, stalls=True):
    """[polling ns per I/O] of each run of @todo (judged_polling()), its
    traces replayed through its policy at entry_of(trace's row) ns of
    entering and leaving poll mode, with the traces' stalls unless @stalls
    is False; one replay process per CPU at a time, in @todo's order"""
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        futures = [[pool.submit(replayed_polling, a, r["trace"], policy,
                                entry_of(r), stalls) for r in parts]
                   for parts, policy, v in todo]
    return [sum(f.result() for f in fs) / int(parts[0]["ios"])
            for (parts, policy, v), fs in zip(todo, futures)]


def entry_diagnosis(a, runs, vrows, entry, ventry, by):
    """validation.md's next-to-last table: the judged polling figures
    again, each run's traces replayed at the cost of entering and leaving
    poll mode that the run itself measured, less its stalls, beside the
    validation's (@ventry: each run's venue_entry()) and the main replay's
    at the median of all runs, @entry (@by: its rows).  Not a validation
    (the run's own cost comes from its CPU time), but it tells how much of
    each error is that cost"""
    todo = judged_polling(runs, vrows)
    own = replayed_judged(a, todo, lambda r: run_entry(a.traces, r, entry))
    rows = []
    for (parts, policy, v), pred in zip(todo, own):
        ios = int(parts[0]["ios"])
        median = summed(by, parts, policy)["polling_ns"] / ios
        meas = float(v["measured"])
        rows.append((v["trace"], policy,
                     "/".join(str(run_entry(a.traces, r, entry))
                              for r in parts),
                     pred, meas, rel_error(pred, meas),
                     ventry[run_key(parts[0])], float(v["error"]),
                     rel_error(median, meas)))
    full = any(full_entry(r) is not None
               for parts, _, _ in todo for r in parts)
    text = ("Diagnosis, not validation: the judged polling figures again, "
            "each run's traces replayed at the cost of entering and leaving "
            "poll mode that the run itself measured (%s; per trace, / "
            "between IOThreads), beside the "
            "validation's (the median of the other runs of the venue and "
            "workload) and the median of all runs, %d ns, which the "
            "priced tables charge. The run's own cost comes from its CPU "
            "time, so that column is not a prediction; it tells how much "
            "of each error the cost alone explains. Within 10%%: %d of %d "
            "at the run's own cost, %d at its venue's, %d at the median "
            "of all runs.\n\n"
            "| trace | policy | own entry ns | predicted | measured | "
            "error | venue's entry ns | error (validated) | "
            "at the median of all runs |\n"
            "|---|---|--:|--:|--:|--:|--:|--:|--:|\n" % (
                "complete.py's full_poll_excess_ns less the run's base "
                "(full_entry(): the median over its waits that polled for "
                "their whole time and caught nothing, negative too)"
                if full else
                "complete.py's poll_entry_ns, from its iterations that "
                "polled and caught nothing, less the run's stalls per such "
                "iteration, 0 where negative",
                entry, sum(abs(r[5]) <= 0.1 for r in rows), len(rows),
                sum(abs(r[7]) <= 0.1 for r in rows),
                sum(abs(r[8]) <= 0.1 for r in rows)))
    for r in rows:
        text += ("| %s | %s | %s | %.4f | %s | %+.1f%% | %d | %+.1f%% | "
                 "%+.1f%% |\n" % (r[0], r[1], r[2], r[3], r[4], 100 * r[5],
                                   r[6], 100 * r[7], 100 * r[8]))
    return text + "\n"


@functools.lru_cache(maxsize=None)
def trace_stalls(path):
    """(stalled ns, stalled iterations) of a complete trace: the iterations
    that polled, caught nothing and still found a polled handler's event
    there when the fd wait began, and whose polling ended later than the
    polling time the run had set (wall clock, less the median time from
    aio_poll()'s start to the end of try_poll_mode() of the iterations that
    did not poll).  Something held the polling thread past its time, and
    the event came meanwhile: on this machine a disk's completion interrupt
    handled on the thread's CPU, which the kernel charges to the thread
    (results/irq-charge.csv), or a preemption, which it does not.  0 for
    traces without the recorded polling and set times"""
    rows = []
    with gzip.open(path, "rt") as f:
        for line in f:
            x = line.split()
            if len(x) < 9 or x[0] != "i":
                continue
            cap, pns = int(x[6]), int(x[7])
            if pns < 0:
                continue
            rows.append((x[2], int(x[3]), int(x[5]),
                         pns if cap < 0 else min(pns, cap)))
    base = sorted(polled for end, woken, polled, p in rows if p == 0)
    base = base[len(base) // 2] if base else 0
    stalled = [polled - base - p for end, woken, polled, p in rows
               if end == "p" and woken == 0 and p > 0 and
               polled - base > p]
    return sum(stalled), len(stalled)


def stall_diagnosis(a, runs, vrows, whole):
    """validation.md's last table: the judged polling figures replayed as
    the model was until 2026-12-02, without the stalls and at the median of
    the runs' whole cost of entering and leaving poll mode, stalls included
    (@whole ns)"""
    todo = judged_polling(runs, vrows)
    old = replayed_judged(a, todo, lambda r: whole, False)
    rows = []
    for (parts, policy, v), before in zip(todo, old):
        ios = int(parts[0]["ios"])
        stall = [run_stalls(a.traces, r) for r in parts]
        meas = float(v["measured"])
        rows.append((v["trace"], policy, sum(n for s, n in stall),
                     sum(s for s, n in stall) / ios, float(v["error"]),
                     rel_error(before, meas)))
    nbd = [r for r in rows if r[0].startswith("nbd-")]
    text = ("The stalls: an iteration that polled, caught nothing and "
            "found a polled handler's event there when the fd wait began, "
            "but whose polling ended later than the polling time the run "
            "had set, was held past that time while the event came (on "
            "this machine a disk's completion interrupt handled on the "
            "polling thread's CPU, which the kernel counts as the thread's "
            "CPU time: results/irq-charge.csv; or a preemption, which it "
            "does not). The replay charges a policy that polls at least as "
            "long as the recorded run for the stall, and the cost of "
            "entering and leaving poll mode less the stalls. Below, the "
            "judged polling figures with the stalls (the validation above) "
            "and as the replay was until 2026-12-02, without them and at "
            "the median of the runs' whole cost, stalls included, %d ns. "
            "Within 10%%: %d of %d with the stalls, %d without; over NBD "
            "at a fixed rate, where the disk's completions are the polled "
            "events, %d and %d of %d.\n\n"
            "| trace | policy | stalled iterations | stalls ns/I/O | "
            "error | without the stalls |\n|---|---|--:|--:|--:|--:|\n" % (
                whole, sum(abs(r[4]) <= 0.1 for r in rows), len(rows),
                sum(abs(r[5]) <= 0.1 for r in rows),
                sum(abs(r[4]) <= 0.1 for r in nbd),
                sum(abs(r[5]) <= 0.1 for r in nbd), len(nbd)))
    for r in rows:
        text += "| %s | %s | %d | %.1f | %+.1f%% | %+.1f%% |\n" % (
            r[0], r[1], r[2], r[3], 100 * r[4], 100 * r[5])
    return text + "\n"


def write_priced_md(a, measured, priced):
    """priced.md: per workload and round, each real run priced from what
    it measured, each policy priced on its own run's trace (the figures
    the validation checks), and every policy on the floor's trace (same
    arrivals for all, the closed loop left out); each against the
    references of the trace it is compared on"""
    by = {(p["trace"], p["policy"]): p for p in priced}
    rows = {}
    for (venue, wl, variant, rnd), parts in group_runs(measured).items():
        rows.setdefault((venue, wl, rnd), {})[variant] = parts
    order = [p for p in POLICY_VARIANT if p != "never-poll"]
    header = ("| workload | round | policy | CPU | latency | x opt | x fix |\n"
              "|---|---|---|--:|--:|--:|--:|\n")

    def row(f, key, pol, parts, ios, cpu, lat):
        # references summed over the run's traces (with two IOThreads,
        # each context's own optimum and best fixed polling time)
        venue, wl, rnd = key
        opt = summed(by, parts, "optimum")
        fix = summed(by, parts, "best-fixed")
        f.write("| %s-%s | %s | %s | %.1f | %.1f | %.2f | %.2f |\n"
                % (venue, wl, rnd, pol, cpu / ios / 1000, lat / ios / 1000,
                   cpu / max(opt["cpu_ns"], 1),
                   cpu / max(fix["cpu_ns"], 1)))

    def replayed(f, key, pol, parts):
        p = summed(by, parts, pol)
        if p:
            row(f, key, pol, parts, p["ios"], p["cpu_ns"],
                p["added_latency_ns"])

    with open(os.path.join(a.out, "priced.md"), "w") as f:
        f.write("CPU and added latency per I/O in us (wakeup %d ns of CPU, "
                "%d ns of latency).\n\n" % (a.wakeup_cpu, a.wakeup_latency))
        f.write("Measured: each real run's polling (the thread's CPU time "
                "in try_poll_mode(), less what its iterations that did not "
                "poll spent there) plus "
                "its blocking wakeups (voluntary context switches) at the "
                "price; latency = wakeups x the wakeup latency; x opt / x "
                "fix: over the optimum / the best fixed polling time of "
                "the run's own trace.\n\n" + header)
        for key, runs in sorted(rows.items()):
            for pol in ["never-poll"] + order:
                run = runs.get(POLICY_VARIANT[pol])
                if run:
                    row(f, key, pol, run, int(run[0]["ios"]),
                        sum(measured_polling(r) for r in run) +
                        int(run[0]["vcsw"]) * a.wakeup_cpu,
                        int(run[0]["vcsw"]) * a.wakeup_latency)
        f.write("\n")
        f.write("Own trace: each policy on the trace of its own run; "
                "x opt: its CPU over the optimum's on that trace; x fix: "
                "over the best fixed polling time's.\n\n" + header)
        for key, runs in sorted(rows.items()):
            for pol in ["never-poll"] + order:
                run = runs.get(POLICY_VARIANT[pol])
                if run:
                    replayed(f, key, pol, run)
        f.write("\nFloor trace: every policy on the floor run's trace "
                "(the same arrivals; not validated: the closed loop is "
                "left out); best-fixed-lat and optimum-lat: the best fixed "
                "polling time and the optimum within 1.05 times the added "
                "latency of unpatched on the trace.\n\n" + header)
        for key, runs in sorted(rows.items()):
            fl = runs.get("floor")
            if fl:
                for pol in ["never-poll"] + order + [
                        "poll-to-max", "best-fixed", "optimum",
                        "best-fixed-lat", "optimum-lat"]:
                    replayed(f, key, pol, fl)


def trace_source(trace):
    """which runs a trace came from, as the summaries group them: the
    floor's, patches 1-13's own, or another policy's"""
    variant = trace.replace(".trace.gz", "").rsplit("-r", 1)[0]
    variant = variant.rsplit("-", 1)[1]
    return {"floor": "floor", "new": "own"}.get(variant, "other")


def sensitivity(a):
    """the priced replay of every trace at each cost of entering and leaving
    poll mode in @a.entries: per kind of trace, the range of patches 1-13's
    CPU over each other policy's and reference's, and of its added latency
    over 10.2.2's"""
    measured = policy_runs(a.traces)
    traces = [r["trace"] for r in measured]
    ratios = [("cpu_over_unpatched", "unpatched", "cpu_ns"),
              ("cpu_over_series", "series-w3", "cpu_ns"),
              ("cpu_over_optimum", "optimum", "cpu_ns"),
              ("cpu_over_best_fixed", "best-fixed", "cpu_ns"),
              ("latency_over_unpatched", "unpatched", "added_latency_ns")]
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "replay-entry-sensitivity.csv"), "w",
              newline="") as f:
        w = csv.writer(f)
        w.writerow(["poll_entry_ns", "traces", "n"] +
                    [x + m for x, _, _ in ratios for m in ("_min", "_max")])
        for entry in a.entries.split(","):
            if entry == "median":
                entry = poll_entry(measured, a.traces)
            priced, _ = replay(a, traces, int(entry), a.replay_arg)
            by = {}
            for p in priced:
                by.setdefault(p["trace"], {})[p["policy"]] = p
            for kind in ("floor", "own", "other"):
                rows = [d for t, d in sorted(by.items())
                        if trace_source(t) == kind]
                out = [entry, kind, len(rows)]
                for _, ref, col in ratios:
                    x = [int(d["new-w3"][col]) / max(int(d[ref][col]), 1)
                         for d in rows]
                    out += ["%.2f" % min(x), "%.2f" % max(x)]
                w.writerow(out)
    print("evidence.py: wrote %s" %
          os.path.join(a.out, "replay-entry-sensitivity.csv"))


# patches 1-13's ratios that counterfactual() and arrivals() report:
# (label, the policy or reference over which, the column)
NEW_RATIOS = [("x best fixed", "best-fixed", "cpu_ns"),
              ("x optimum", "optimum", "cpu_ns"),
              ("CPU x 10.2.2", "unpatched", "cpu_ns"),
              ("latency x 10.2.2", "unpatched", "added_latency_ns")]


def new_ratio(rows, ref, col):
    """patches 1-13's @col over @ref's, in a trace's priced rows"""
    return int(rows["new-w3"][col]) / max(int(rows[ref][col]), 1)


def only_traces(traces, only):
    """@traces whose name matches the regular expression @only (all of
    them where @only is None)"""
    return [t for t in traces if only is None or re.search(only, t)]


def replay_ways(a, measured, traces, ways):
    """(the cost of entering poll mode charged, [{trace: {policy: priced
    row}}] of @traces replayed once with each list of replay options of
    @ways, {(venue, workload, kind of trace): [traces]}) for
    counterfactual(), arrivals() and bounds()"""
    entry = poll_entry(measured, a.traces)
    traces = only_traces(traces, a.only)
    if not traces:
        sys.exit("evidence.py: no trace of %s matches --only %s"
                 % (a.traces, a.only))
    os.makedirs(a.out, exist_ok=True)
    by = []
    for opts in ways:
        priced, _ = replay(a, traces, entry, a.replay_arg + list(opts))
        d = {}
        for p in priced:
            d.setdefault(p["trace"], {})[p["policy"]] = p
        by.append(d)
    groups = {}
    for t in traces:
        r = next(x for x in measured if x["trace"] == t)
        groups.setdefault((r["venue"], r["workload"], trace_source(t)),
                          []).append(t)
    return entry, by, groups


def counterfactual(a, extra, name, what, base=()):
    """the priced replay of every trace without and with the replay options
    @extra (a change to patches 1-13's policy that is not a patch), both
    with the options @base: per venue, workload and kind of trace, how
    many traces it changes and the largest ratio of patches 1-13's CPU to
    the best fixed polling time's, the optimum's and 10.2.2's, and of its
    added latency to 10.2.2's, before and after.  Writes DIR2/@name.md,
    @what saying what @extra does (and @base, if any), and DIR2/@name.csv,
    the same ratios per trace (counterfactual_rows())"""
    measured = policy_runs(a.traces)
    entry, by, groups = replay_ways(a, measured,
                                    [r["trace"] for r in measured],
                                    [list(base), list(base) + list(extra)])
    ratios = NEW_RATIOS
    out = os.path.join(a.out, name + ".md")
    with open(out, "w") as f:
        f.write("Patches 1-13's policy in the replay, without and with "
                "%s, wakeup %d ns of CPU and %d ns of "
                "latency, %d ns per polling iteration; largest ratio over "
                "the traces, before -> after.\n\n"
                "| venue | workload | traces | changed | %s |\n"
                "|---|---|---|--:|%s\n"
                % (what, a.wakeup_cpu, a.wakeup_latency, entry,
                   " | ".join(x for x, _, _ in ratios),
                   "--:|" * len(ratios)))
        for (venue, wl, kind), ts in sorted(groups.items()):
            changed = sum(trace_changed(by, t) for t in ts)
            cells = []
            for _, ref, col in ratios:
                x = [max(new_ratio(b[t], ref, col) for t in ts) for b in by]
                cells.append("%.2f -> %.2f" % tuple(x))
            f.write("| %s | %s | %s (%d) | %d | %s |\n"
                    % (venue, wl, kind, len(ts), changed, " | ".join(cells)))
    print("evidence.py: wrote %s" % out)
    out = os.path.join(a.out, name + ".csv")
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COUNTERFACTUAL_COLUMNS)
        w.writerows(counterfactual_rows(by, groups))
    print("evidence.py: wrote %s" % out)


# counterfactual()'s CSV: NEW_RATIOS' ratios, each before and after
COUNTERFACTUAL_COLUMNS = ["trace", "venue", "workload", "kind", "changed"] + \
    ["%s_%s" % (x, way) for x in ("x_best_fixed", "x_optimum",
                                  "cpu_x_unpatched", "latency_x_unpatched")
     for way in ("before", "after")]


def trace_changed(by, t):
    """whether counterfactual()'s options changed patches 1-13's CPU on
    trace @t"""
    return by[0][t]["new-w3"]["cpu_ns"] != by[1][t]["new-w3"]["cpu_ns"]


def counterfactual_rows(by, groups):
    """counterfactual()'s CSV: a row per trace, in its table's order, with
    whether the options changed its CPU and each ratio of NEW_RATIOS
    before and after"""
    rows = []
    for (venue, wl, kind), ts in sorted(groups.items()):
        for t in sorted(ts):
            row = [t, venue, wl, kind, int(trace_changed(by, t))]
            for _, ref, col in NEW_RATIOS:
                row += ["%.4f" % new_ratio(b[t], ref, col) for b in by]
            rows.append(row)
    return rows


def timeout0(a):
    """counterfactual(): --timeout0-rule (patches 1-13's policy leaving out
    the waits whose timeout was 0).  Writes DIR2/timeout0.md"""
    counterfactual(a, ["--timeout0-rule"], "timeout0",
                   "--timeout0-rule (the waits whose timeout was 0 left "
                   "out of its histogram)")


def calibrated(a):
    """counterfactual(): patches 1-13's policy with its wakeup constants
    set to the price of the replay (--policy-wakeup-cpu,
    --policy-wakeup-latency), as a build calibrated to the host that
    recorded the traces would have them.  Writes DIR2/calibrated.md; with
    --policy-cpu or --policy-latency, the policy's constants set to those
    instead (e.g. the price that the measured-price patch, tried as patch
    16, measured on the host, while the replay prices a wakeup at the
    host's whole price), and writes DIR2/calibrated-CPU-LATENCY.md"""
    cpu = a.wakeup_cpu if a.policy_cpu is None else a.policy_cpu
    lat = a.wakeup_latency if a.policy_latency is None else a.policy_latency
    at_price = a.policy_cpu is None and a.policy_latency is None
    counterfactual(a, ["--policy-wakeup-cpu", str(cpu),
                       "--policy-wakeup-latency", str(lat)],
                   "calibrated" if at_price
                   else "calibrated-%d-%d" % (cpu, lat),
                   "its wakeup constants (AIO_POLL_WAKEUP_NS, "
                   "AIO_POLL_WAKEUP_LATENCY_NS: 8000 and 10000 ns) set to "
                   + ("the price below" if at_price
                      else "%d and %d ns" % (cpu, lat)))


def pending(a):
    """counterfactual(): --pending-rule (patches 1-15's policy leaving out
    the waits that neither slept nor ended by polling: their event was
    there when the fd wait began), or with @a.cut --cut-rule (only those
    whose polling ended early without progress, which aio_poll() can
    tell), or with @a.idle --idle-rule (the waits in which nothing ran
    while no timer was due; with @a.notifier, that handler is the
    AioContext's notifier, whose aio_notify() runs nothing);
    with @a.calibrate, both ways with the policy's wakeup constants set to
    the price.  Writes DIR2/pending.md, pending-cut.md, pending-idle.md
    or pending-idle-notifierH.md (-notifierauto.md), with -cpu before .md
    with @a.calibrate"""
    base = []
    if a.idle:
        rule = ["--idle-rule"]
        name = "pending-idle"
        what = ("--idle-rule (the waits in which nothing ran, no handler "
                "and no bottom half, while no timer was due, left out of "
                "its histogram")
        if a.notifier == "auto":
            rule += ["--notifier", "auto"]
            name += "-notifierauto"
            what += ("; the AioContext's notifier found in each trace "
                     "(--notifier auto)")
        elif a.notifier is not None:
            rule += ["--notifier", str(a.notifier)]
            name += "-notifier%d" % a.notifier
            what += "; handler %d taken for the AioContext's notifier" \
                % a.notifier
        what += ")"
    elif a.cut:
        rule = ["--cut-rule"]
        name = "pending-cut"
        what = ("--cut-rule (the waits whose polling ended early without "
                "progress, need_wait() or aio_notify() caught, their event "
                "there when the fd wait began, left out of its histogram)")
    else:
        rule = ["--pending-rule"]
        name = "pending"
        what = ("--pending-rule (the waits that neither slept nor ended by "
                "polling, their event there when the fd wait began, left "
                "out of its histogram)")
    if a.calibrate:
        base = ["--policy-wakeup-cpu", str(a.wakeup_cpu),
                "--policy-wakeup-latency", str(a.wakeup_latency)]
        name += "-cpu"
        what += (", both ways with its wakeup constants "
                 "(AIO_POLL_WAKEUP_NS, AIO_POLL_WAKEUP_LATENCY_NS: 8000 "
                 "and 10000 ns) set to the price below")
    counterfactual(a, rule, name, what, base)


def context(a):
    """counterfactual(): --context-rule K (patches 1-13's policy with one
    histogram per position after the last long wait); with @a.calibrate,
    also its price of a wakeup's CPU set to the replay's; with
    @a.sees_arrivals, also told when the events of its slept waits came.
    Writes DIR2/context.md, context-cpu.md, context-arrivals.md or
    context-cpu-arrivals.md"""
    extra = ["--context-rule", str(a.classes)]
    what = ["--context-rule %d (a histogram for each of the %d positions "
            "after the last wait longer than a wakeup's CPU)"
            % (a.classes, a.classes)]
    name = "context"
    if a.calibrate:
        extra += ["--policy-wakeup-cpu", str(a.wakeup_cpu)]
        what.append("its price of a wakeup's CPU (AIO_POLL_WAKEUP_NS, "
                    "8000 ns) set to the replay's")
        name += "-cpu"
    if a.sees_arrivals:
        extra += ["--policy-sees-arrivals"]
        what.append("--policy-sees-arrivals (told when the event of each "
                    "slept wait came)")
        name += "-arrivals"
    counterfactual(a, extra, name, ", ".join(what))


def constants_row(rows):
    """against the replay targets, patches 1-13's policy (new-w3) on the
    traces of @rows ({trace: {policy: priced row}}): how many traces have
    its CPU above 10.2.2's, above patches 1-8's (series-w3) and its added
    latency above 1.05x 10.2.2's, each with the largest ratio"""
    out = []
    for ref, col, limit in (("unpatched", "cpu_ns", 1.0),
                            ("series-w3", "cpu_ns", 1.0),
                            ("unpatched", "added_latency_ns", 1.05)):
        x = [new_ratio(r, ref, col) for r in rows.values()]
        out += [sum(v > limit for v in x), max(x)]
    return out


def constants(a):
    """patches 1-13's policy with each pair of wakeup constants of the grid
    @a.cpu x @a.latency (--policy-wakeup-cpu, --policy-wakeup-latency) in
    place of the tree's, every trace replayed at the price; per pair,
    constants_row(): a pair meets all three targets on every trace where
    its row has three zeroes.  Writes DIR2/constants.md"""
    measured = policy_runs(a.traces)
    pairs = [(cpu, lat) for cpu in a.cpu.split(",")
             for lat in a.latency.split(",")]
    entry, by, _ = replay_ways(
        a, measured, [r["trace"] for r in measured],
        [["--no-references", "--policy-wakeup-cpu", cpu,
          "--policy-wakeup-latency", lat] for cpu, lat in pairs])
    out = os.path.join(a.out, "constants.md")
    with open(out, "w") as f:
        f.write("Patches 1-13's policy in the replay with its wakeup "
                "constants (AIO_POLL_WAKEUP_NS, AIO_POLL_WAKEUP_LATENCY_NS; "
                "the tree's: 8000 and 10000 ns) set to each pair below, "
                "replayed at a wakeup of %d ns of CPU and %d ns of latency, "
                "%d ns per polling iteration%s, %d traces: on how many it "
                "misses each replay target, and the largest ratio.\n\n"
                "| policy's wakeup CPU (ns) | policy's wakeup latency (ns) "
                "| CPU > 10.2.2's | largest | CPU > patches 1-8's | largest "
                "| latency > 1.05x 10.2.2's | largest |\n"
                "|--:|--:|--:|--:|--:|--:|--:|--:|\n"
                % (a.wakeup_cpu, a.wakeup_latency, entry,
                   ", with " + " ".join(a.replay_arg) if a.replay_arg
                   else "", len(by[0])))
        for pair, rows in zip(pairs, by):
            f.write("| %s | %s | %d | %.4f | %d | %.4f | %d | %.3f |\n"
                    % (pair + tuple(constants_row(rows))))
    print("evidence.py: wrote %s" % out)


def bandit_ways(a):
    """what evidence.py bandit replays for @a: (file name, the rule's
    description, its price of a wakeup and its longest time, as strings,
    and per triple (K, PCT, N) of the grid @a.every x @a.near x
    @a.classes, the triple and the replay's options).  The rule's price is
    @a.rule_wakeup_cpu, by default the replay's @a.wakeup_cpu; its
    longest time @a.rule_max, by default its price; each given adds
    -ruleNS or -maxNS to the name"""
    grid = [(k, n, c) for c in a.classes.split(",")
            for k in a.every.split(",") for n in a.near.split(",")]
    cpu = str(a.rule_wakeup_cpu if a.rule_wakeup_cpu is not None
              else a.wakeup_cpu)
    top = str(a.rule_max) if a.rule_max is not None else cpu
    suffix = ("-rule%s" % cpu if a.rule_wakeup_cpu is not None else "") + \
        ("-max%s" % top if a.rule_max is not None else "")
    if a.hybrid:
        # the policy's histogram keeps the tree's constants
        price = ["--bandit-hybrid"] + \
            (["--bandit-count-all"] if a.count_all else []) + \
            ["--bandit-wakeup-cpu", cpu]
        name = "bandit-hybrid-all" if a.count_all else "bandit-hybrid"
        what = ("`%s`: positions whose waits an fd without `io_poll()` "
                "ends less than half of the time poll for the policy's one "
                "histogram's time, with the tree's constants, which %s; "
                % (" ".join(price), "counts every wait as patches 1-15 do"
                   if a.count_all else "leaves such waits out"))
    else:
        price = ["--policy-wakeup-cpu", cpu]
        name = "bandit"
        what = "`--policy-wakeup-cpu %s`; " % cpu
    ways = [((k, n, c), ["--no-references", "--context-rule", c,
                         "--bandit", k, "--bandit-near", n,
                         "--bandit-max", top] + price)
            for k, n, c in grid]
    return name + suffix, what, cpu, top, ways


def bandit(a):
    """the policy with aio-poll-replay --bandit K --bandit-near PCT
    --context-rule N for each triple of bandit_ways(@a), every trace
    replayed at the price @a.wakeup_cpu: per triple, constants_row() and
    the traces above 1.25x the optimum, against the references of the
    replay without it (the first row).  Writes DIR2/NAME.md, NAME
    bandit, or with @a.hybrid bandit-hybrid (--bandit-hybrid, the
    policy's own constants the tree's), bandit-hybrid-all with
    @a.count_all, and the suffixes of bandit_ways()"""
    measured = policy_runs(a.traces)
    name, what, cpu, top, ways = bandit_ways(a)
    grid = [triple for triple, _ in ways]
    entry, by, _ = replay_ways(
        a, measured, [r["trace"] for r in measured],
        [[]] + [args for _, args in ways])
    refs = by[0]
    nbd = [t for t in refs if t.startswith("nbd-randread-8k-qd8-")]
    out = os.path.join(a.out, name + ".md")
    with open(out, "w") as f:
        f.write("The policy in the replay with a position rule that "
                "learns from the cost each polling time was seen to have "
                "(`--bandit K --bandit-near PCT --context-rule N "
                "--bandit-max %s`, %sN positions after the last wait "
                "longer than %s ns, 0 and the bin edges up to %s ns, "
                "every K-th wait of a position exploring those within "
                "PCT%% of the cheapest's cost; 0: all), replayed at a "
                "wakeup of %d ns of CPU and %d ns of latency, %d ns per "
                "polling iteration%s, %d traces: on how many it misses "
                "each replay target, and the largest ratio; the "
                "references (10.2.2, patches 1-8, the optimum) from the "
                "replay without it, whose own row is the first.\n\n"
                "| K | PCT | N | CPU > 10.2.2's | largest | CPU > patches "
                "1-8's | largest | latency > 1.05x 10.2.2's | largest | "
                "CPU > 1.25x the optimum's | largest | NBD at QD8, x the "
                "optimum |\n"
                "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n"
                % (top, what, cpu, top, a.wakeup_cpu, a.wakeup_latency,
                   entry, ", with " + " ".join(a.replay_arg)
                   if a.replay_arg else "", len(refs)))
        for triple, rows in zip([("-", "-", "-")] + grid, by):
            f.write("| %s | %s | %s | %d | %.4f | %d | %.4f | %d | %.3f "
                    "| %d | %.3f | %.2f-%.2f |\n"
                    % (triple + tuple(bandit_row(refs, rows, nbd))))
    print("evidence.py: wrote %s" % out)


def bandit_row(refs, rows, nbd):
    """constants_row() of the new-w3 rows of @rows ({trace: {policy:
    priced row}}) against the other policies of @refs (the same, from the
    replay with references), then how many traces have new-w3's CPU above
    1.25x the optimum's, the largest such ratio, and its least and largest
    over the traces @nbd (0, 0 without them)"""
    new = {t: dict(refs[t], **{"new-w3": rows[t]["new-w3"]}) for t in refs}
    opt = {t: new_ratio(r, "optimum", "cpu_ns") for t, r in new.items()}
    return constants_row(new) + [
        sum(v > 1.25 for v in opt.values()), max(opt.values()),
        min((opt[t] for t in nbd), default=0),
        max((opt[t] for t in nbd), default=0)]


# The references of aio-poll-replay --clairvoyant, each the best fixed
# polling time in hindsight per class of waits, and what the class knows
CLAIRVOYANT = [
    ("best-fixed", "nothing (one time for the whole trace)"),
    ("clairvoyant-prev1", "the previous wait: how it ended, whether its "
     "event was there, its arrival to within 2x"),
    ("clairvoyant-prev2", "the arrivals of the previous two waits, to "
     "within 2x"),
    ("clairvoyant-since-long", "how many waits ago the last one longer "
     "than a wakeup's CPU came (0-15)"),
    ("clairvoyant-window", "which stretch of 1000 waits it is in"),
    ("clairvoyant-window-prev1", "its stretch and the previous wait"),
]


BOUND_COLUMNS = [("10.2.2", "unpatched"), ("patches 1-13", "new-w3")] + \
    [(name, name) for name, _ in CLAIRVOYANT]


def bound_ranges(by, traces):
    """for the priced rows @by ({trace: {policy: row}}) of @traces: the range
    (least, largest) of each BOUND_COLUMNS policy's CPU over the optimum's,
    and last of patches 1-13's over the least CLAIRVOYANT reference's"""
    out = []
    for _, pol in BOUND_COLUMNS:
        x = [int(by[t][pol]["cpu_ns"]) /
             max(int(by[t]["optimum"]["cpu_ns"]), 1) for t in traces]
        out.append((min(x), max(x)))
    x = [int(by[t]["new-w3"]["cpu_ns"]) /
         max(min(int(by[t][n]["cpu_ns"]) for n, _ in CLAIRVOYANT), 1)
         for t in traces]
    out.append((min(x), max(x)))
    return out


def bounds(a):
    """the clairvoyant references of every trace (aio-poll-replay
    --clairvoyant): per venue, workload and kind of trace, bound_ranges().
    Writes DIR2/bounds.md and DIR2/bounds.csv (one row per trace and
    policy)"""
    measured = policy_runs(a.traces)
    traces = [r["trace"] for r in measured]
    entry, (by,), groups = replay_ways(a, measured, traces,
                                       [["--clairvoyant"]])
    out = os.path.join(a.out, "bounds.md")
    with open(out, "w") as f:
        f.write("CPU over the offline optimum's in the replay, wakeup %d ns "
                "of CPU and %d ns of latency, %d ns per polling iteration; "
                "range over the traces.  Each clairvoyant reference is the "
                "best fixed polling time in hindsight for each class of "
                "waits: no rule that decides from what the class knows "
                "costs less on the trace, and an online rule does not know "
                "the best time of a class until the trace has ended.\n\n"
                % (a.wakeup_cpu, a.wakeup_latency, entry))
        for name, knows in CLAIRVOYANT:
            f.write("- %s: knows %s\n" % (name, knows))
        f.write("\n| venue | workload | traces | %s | patches 1-13 x "
                "least clairvoyant |\n|---|---|---|%s--:|\n"
                % (" | ".join(c for c, _ in BOUND_COLUMNS),
                   "--:|" * len(BOUND_COLUMNS)))
        for (venue, wl, kind), ts in sorted(groups.items()):
            f.write("| %s | %s | %s (%d) | %s |\n"
                    % (venue, wl, kind, len(ts),
                       " | ".join("%.2f-%.2f" % x
                                  for x in bound_ranges(by, ts))))
    with open(os.path.join(a.out, "bounds.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["trace", "policy", "cpu_ns", "optimum_cpu_ns"])
        for t in by:        # the traces replayed, in order
            for _, pol in BOUND_COLUMNS:
                w.writerow([t, pol, by[t][pol]["cpu_ns"],
                            by[t]["optimum"]["cpu_ns"]])
    print("evidence.py: wrote %s" % out)


def arrivals(a):
    """the references with the kernel's wakeups and without them
    (--no-arrivals); writes DIR2/arrivals.md"""
    measured = policy_runs(a.traces)
    with open(os.path.join(a.traces, "wakeups.csv")) as f:
        wake = {r["trace"]: r for r in csv.DictReader(f)}
    traces = [r["trace"] for r in measured if r["trace"] in wake]
    if not traces:
        sys.exit("evidence.py: no trace of %s has the kernel's wakeups "
                 "(record with ./apw evidence --sched-wakeups)" % a.traces)
    entry, by, groups = replay_ways(a, measured, traces,
                                    [[], ["--no-arrivals"]])
    ratios = NEW_RATIOS

    def span(xs, fmt="%.2f"):
        lo, hi = min(xs), max(xs)
        return fmt % lo if fmt % lo == fmt % hi else \
            (fmt + "-" + fmt) % (lo, hi)

    out = os.path.join(a.out, "arrivals.md")
    with open(out, "w") as f:
        f.write("Patches 1-13's policy in the replay (weight 3) over the "
                "references, with the event of each slept wait where the "
                "kernel woke the thread (measured) and at the wait's end "
                "less the price's latency (placed: --no-arrivals); wakeup "
                "%d ns of CPU and %d ns of latency, %d ns per polling "
                "iteration; range over the traces.  Wakeup latency: from "
                "the kernel's wakeup to the end of the fd wait in the "
                "slept waits (us; the median of the traces' medians, and "
                "the range of their 10th and 90th percentiles).\n\n"
                "| venue | workload | traces | slept waits with their "
                "wakeup | wakeup latency: median (p10-p90) | %s |\n"
                "|---|---|---|--:|--:|%s\n"
                % (a.wakeup_cpu, a.wakeup_latency, entry,
                   " | ".join("%s: measured / placed" % x
                              for x, _, _ in ratios),
                   "--:|" * len(ratios)))
        for (venue, wl, kind), ts in sorted(groups.items()):
            w = [wake[t] for t in ts]
            found = sum(int(x["found"]) for x in w)
            slept = sum(int(x["slept"]) for x in w)
            p50 = sorted(int(x["latency_p50_ns"]) for x in w
                         if x["latency_p50_ns"])
            cells = []
            for _, ref, col in ratios:
                x = [[new_ratio(b[t], ref, col) for t in ts] for b in by]
                cells.append("%s / %s" % (span(x[0]), span(x[1])))
            lat = "-"
            if p50:
                lat = "%.1f (%.1f-%.1f)" % (
                    p50[len(p50) // 2] / 1000,
                    min(int(x["latency_p10_ns"]) for x in w
                        if x["latency_p10_ns"]) / 1000,
                    max(int(x["latency_p90_ns"]) for x in w
                        if x["latency_p90_ns"]) / 1000)
            f.write("| %s | %s | %s (%d) | %d of %d | %s | %s |\n"
                    % (venue, wl, kind, len(ts), found, slept, lat,
                       " | ".join(cells)))
        f.write(measured_latency_table(a.traces, measured, wake))
    print("evidence.py: wrote %s" % out)


def kernel_latency(path):
    """(the sum over the slept waits of a trace that have their wakeup,
    timers aside, of the time from the wakeup to the end of the wait, and
    the number of those waits)"""
    total = n = 0
    with gzip.open(path, "rt") as f:
        for line in f:
            w = line.split()
            if w and w[0] == "i" and w[3] == "1" and len(w) > 9 and \
                    int(w[9]) >= 0 and w[2] != "t":
                total += int(w[1]) - int(w[9])
                n += 1
    return total, n


def measured_latency_table(traces, measured, wake):
    """arrivals.md's second table: the latency that the runs' wakeups
    added as the kernel measured it (kernel_latency(), per I/O, each run's
    traces summed), patches 1-13 over 10.2.2 and over patches 1-8 at
    weight 3, paired within a round, with 95% intervals"""
    figs = {}
    for key, parts in group_runs([r for r in measured
                                  if r["trace"] in wake]).items():
        got = [kernel_latency(os.path.join(traces, r["trace"]))
               for r in parts]
        figs[key] = (sum(x for x, _ in got) / int(parts[0]["ios"]),
                     sum(n for _, n in got) / int(parts[0]["ios"]))
    text = ("\nThe latency that the wakeups added, as the kernel measured "
            "it: per I/O, the sum over the slept waits (timers aside) of "
            "the time from the wakeup to the end of the wait; patches "
            "1-13 over each variant within a round, geometric mean [95% "
            "interval], against 1.05x; beside it the same for the count "
            "of those waits, and patches 1-13's mean latency per such "
            "wait over the rounds (us).\n\n"
            "| venue | workload | ratio | rounds | added latency | "
            "slept waits | us per wakeup |\n|---|---|---|--:|---|---|--:|\n")
    for venue, wl in sorted({(k[0], k[1]) for k in figs}):
        rounds = sorted({k[3] for k in figs if k[:2] == (venue, wl)})
        own = [figs[(venue, wl, "new", r)] for r in rounds
               if (venue, wl, "new", r) in figs]
        per = sum(x for x, _ in own) / max(sum(n for _, n in own), 1e-9)
        for other, label in (("unpatched", "vs 10.2.2"),
                             ("w3", "vs patches 1-8 w3")):
            pairs = [(figs[(venue, wl, "new", r)],
                      figs[(venue, wl, other, r)]) for r in rounds
                     if (venue, wl, "new", r) in figs and
                     (venue, wl, other, r) in figs and
                     figs[(venue, wl, other, r)][1] > 0]
            if not pairs:
                continue
            lat = stats.interval([x[0] / y[0] for x, y in pairs])
            cnt = stats.interval([x[1] / y[1] for x, y in pairs])
            text += "| %s | %s | %s | %d | %s %s | %s | %.1f |\n" % (
                venue, wl, label, len(pairs), stats.fmt(lat, 2),
                stats.verdict(lat, hi=1.05), stats.fmt(cnt, 2),
                per / 1000)
    return text


def merge(old, new):
    """the rows of measured.csv @old of venues that @new has not, then
    @new's rows, written back to @old"""
    with open(new, newline="") as f:
        added = list(csv.DictReader(f))
    venues = {r["venue"] for r in added}
    with open(old, newline="") as f:
        kept = [r for r in csv.DictReader(f) if r["venue"] not in venues]
    with open(old, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=MEASURED_FIELDS)
        w.writeheader()
        w.writerows(kept + added)


# rounds: (label, variant compared with 'new', metric, target's upper bound
# or None where the ratio is only reported)
ROUND_RATIOS = [("CPU vs 10.2.2", "unpatched", "cpu", 1.0),
                ("CPU vs patches 1-8 w3", "w3", "cpu", 1.0),
                ("CPU vs the floor", "floor", "cpu", None),
                ("latency vs 10.2.2", "unpatched", "latency", 1.05)]


def run_priced(parts, wakeup_cpu, wakeup_latency):
    """{cpu, latency} per I/O of a run (its rows, one per trace)
    from what it measured: polling (measured_polling()) plus its blocking
    wakeups at @wakeup_cpu ns each; added latency, its wakeups at
    @wakeup_latency ns each"""
    ios = int(parts[0]["ios"])
    wakeups = int(parts[0]["vcsw"])
    polling = sum(measured_polling(r) for r in parts)
    return {"cpu": (polling + wakeups * wakeup_cpu) / ios,
            "latency": wakeups * wakeup_latency / ios}


def round_ratios(recordings):
    """[(venue, workload, label, interval, verdict or '', per-round
    ratios)] for ROUND_RATIOS: within each round, the run of 'new' over
    the other variant's; rounds where either did not run are left out.
    @recordings: [(rows of a measured.csv, wakeup CPU ns, wakeup latency
    ns)], each recording's runs priced at its own price and its rounds
    pooled with the others' (a round is paired within its recording)"""
    figs = {}
    for k, (measured, wakeup_cpu, wakeup_latency) in enumerate(recordings):
        for key, parts in group_runs(measured).items():
            figs[key[:3] + ((k, int(key[3])),)] = run_priced(
                parts, wakeup_cpu, wakeup_latency)
    out = []
    for venue, wl in sorted({(k[0], k[1]) for k in figs}):
        rounds = sorted({k[3] for k in figs if k[:2] == (venue, wl)})
        for label, other, metric, hi in ROUND_RATIOS:
            ratios = [figs[(venue, wl, "new", r)][metric] /
                      figs[(venue, wl, other, r)][metric]
                      for r in rounds
                      if (venue, wl, "new", r) in figs and
                      (venue, wl, other, r) in figs and
                      figs[(venue, wl, other, r)][metric] > 0]
            iv = stats.interval(ratios)
            out.append((venue, wl, label, iv,
                        stats.verdict(iv, hi=hi) if hi else "", ratios))
    return out


def own_references(measured, priced, wakeup_cpu):
    """{(venue, workload): [(CPU over the optimum's, over the best fixed
    polling time's)]}, one pair per run of 'new': what the run measured,
    priced (run_priced()), over the references of the run's own traces in
    @priced (replay-priced.csv's rows at the same price, whose traces are
    named without .trace.gz)"""
    by = {(p["trace"] + ".trace.gz", p["policy"]): p for p in priced}
    out = {}
    for key, parts in sorted(group_runs(measured).items()):
        opt = summed(by, parts, "optimum")
        fix = summed(by, parts, "best-fixed")
        if key[2] != "new" or not opt or not fix:
            continue
        cpu = run_priced(parts, wakeup_cpu, 0)["cpu"] * int(parts[0]["ios"])
        out.setdefault(key[:2], []).append(
            (cpu / max(opt["cpu_ns"], 1), cpu / max(fix["cpu_ns"], 1)))
    return out


def replication(first, second):
    """[(venue, workload, ratio, first's verdict, second's, status)]: a
    verdict of @first (rows of a rounds.csv) is 'replicated' when @second
    gives the same verdict, 'not contradicted' when @second does not
    resolve the cell, 'contradicted' when it gives the opposite one (met
    against missed); a cell that @first did not resolve is 'resolved by
    the second' or 'not resolved by either'.  Ratios without a verdict
    (CPU vs the floor) are left out"""
    other = {(r["venue"], r["workload"], r["ratio"]): r["verdict"]
             for r in second}
    out = []
    for r in first:
        key = (r["venue"], r["workload"], r["ratio"])
        v1, v2 = r["verdict"], other.get(key, "")
        if not v1 or not v2:
            continue
        if v1 == "not resolved":
            status = ("not resolved by either" if v2 == "not resolved"
                      else "resolved by the second")
        elif v2 == v1:
            status = "replicated"
        elif v2 == "not resolved":
            status = "not contradicted"
        else:
            status = "contradicted"
        out.append(key + (v1, v2, status))
    return out


def replicate(a):
    with open(a.first) as f:
        first = list(csv.DictReader(f))
    with open(a.second) as f:
        second = list(csv.DictReader(f))
    rows = replication(first, second)
    with open(a.out, "w") as f:
        f.write("The verdicts of %s against those of %s, cell by cell "
                "(replicated: the same verdict; not contradicted: the "
                "second does not resolve the cell; contradicted: met "
                "against missed).\n\n"
                "| venue | workload | ratio | first | second | status |\n"
                "|---|---|---|---|---|---|\n" % (a.first, a.second))
        for row in rows:
            f.write("| %s |\n" % " | ".join(row))
        counts = collections.Counter(row[5] for row in rows)
        f.write("\n%s.\n" % "; ".join(
            "%s: %d" % kv for kv in sorted(counts.items())))


def per_recording(text, n, name):
    """--wakeup-cpu/--wakeup-latency: one figure for every --traces, or a
    comma list of one per --traces"""
    x = [int(v) for v in text.split(",")]
    if len(x) == 1:
        return x * n
    if len(x) != n:
        sys.exit("evidence.py: %s has %d figures for %d --traces"
                 % (name, len(x), n))
    return x


def rounds(a):
    n = len(a.traces)
    cpus = per_recording(a.wakeup_cpu, n, "--wakeup-cpu")
    lats = per_recording(a.wakeup_latency, n, "--wakeup-latency")
    if a.priced and len(a.priced) != n:
        sys.exit("evidence.py: --priced %d times for %d --traces"
                 % (len(a.priced), n))
    recordings, refs = [], {}
    for k, d in enumerate(a.traces):
        with open(os.path.join(d, "measured.csv")) as f:
            measured = list(csv.DictReader(f))
        recordings.append((measured, cpus[k], lats[k]))
        if a.priced:
            with open(a.priced[k]) as f:
                for key, rs in own_references(
                        measured, list(csv.DictReader(f)), cpus[k]).items():
                    refs.setdefault(key, []).extend(rs)
    rows = round_ratios(recordings)
    price = ("CPU = polling + blocking wakeups x %d ns, latency = wakeups "
             "x %d ns" % (cpus[0], lats[0])
             if len(set(zip(cpus, lats))) == 1 else
             "CPU = polling + blocking wakeups x the price of the run's "
             "recording (%s ns), latency = wakeups x its latency (%s ns)"
             % (", ".join(map(str, cpus)), ", ".join(map(str, lats))))
    with open(a.out, "w") as f:
        f.write("The series as its tree holds it ('new') over each "
                "variant, within a round, "
                "on what the runs measured: %s, per I/O; "
                "geometric mean over the rounds%s [95%% interval]; verdict "
                "against CPU <= 1.00x, latency <= 1.05x.\n\n"
                "| venue | workload | ratio | rounds | figure | verdict |\n"
                "|---|---|---|--:|---|---|\n"
                % (price, " of %d recordings" % n if n > 1 else ""))
        for venue, wl, label, iv, v, ratios in rows:
            f.write("| %s | %s | %s | %d | %s | %s |\n"
                    % (venue, wl, label, len(ratios), stats.fmt(iv, 2), v))
        if refs:
            f.write("\nEach run of patches 1-13, its measured CPU (as above) "
                    "over the offline optimum's and the best fixed polling "
                    "time's on its own trace (the replay, same price): "
                    "least and largest over the runs, and how many are "
                    "within the targets (1.25x, 1.10x).\n\n"
                    "| venue | workload | runs | x optimum | within 1.25x "
                    "| x best fixed | within 1.10x |\n"
                    "|---|---|--:|--:|--:|--:|--:|\n")
            for (venue, wl), rs in sorted(refs.items()):
                xo = [r[0] for r in rs]
                xf = [r[1] for r in rs]
                f.write("| %s | %s | %d | %.2f-%.2f | %d | %.2f-%.2f | %d |\n"
                        % (venue, wl, len(rs), min(xo), max(xo),
                           sum(x <= 1.25 for x in xo), min(xf), max(xf),
                           sum(x <= 1.10 for x in xf)))
    with open(re.sub(r"\.md$", "", a.out) + ".csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["venue", "workload", "ratio", "rounds", "mean", "low",
                    "high", "verdict"])
        for venue, wl, label, iv, v, ratios in rows:
            w.writerow([venue, wl, label, len(ratios)] +
                       (["%.4f" % iv[0]] +
                        ["" if x is None else "%.4f" % x for x in iv[1:3]]
                        if iv else ["", "", ""]) + [v])


def notifier_arg(v):
    """pending --notifier: a handler id, 0..63, or auto"""
    if v == "auto":
        return v
    try:
        h = int(v)
    except ValueError:
        h = -1
    if not 0 <= h <= 63:
        raise argparse.ArgumentTypeError(
            "a handler id, 0..63, or auto: %r" % v)
    return h


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n", 2)[2])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("convert")
    c.add_argument("bench")
    c.add_argument("--traces", required=True)
    c.add_argument("--sleep-ns", type=int, default=4000)
    v = sub.add_parser("validate")
    e = sub.add_parser("sensitivity")
    t = sub.add_parser("timeout0")
    k = sub.add_parser("calibrated")
    k.add_argument("--policy-cpu", type=int, default=None,
                   help="the policy's price of a wakeup's CPU (default: "
                   "--wakeup-cpu)")
    k.add_argument("--policy-latency", type=int, default=None,
                   help="the policy's wakeup latency (default: "
                   "--wakeup-latency)")
    w = sub.add_parser("arrivals")
    b = sub.add_parser("bounds")
    g = sub.add_parser("constants")
    g.add_argument("--cpu", default="8000,16000,20498",
                   help="comma list of the policy's wakeup CPU, ns")
    g.add_argument("--latency", default="10000,30616",
                   help="comma list of the policy's wakeup latency, ns")
    d = sub.add_parser("bandit")
    d.add_argument("--every", default="8,16,32",
                   help="comma list of K, every K-th wait explores")
    d.add_argument("--near", default="130,150",
                   help="comma list of PCT, what it explores (0: all)")
    d.add_argument("--classes", default="4,16",
                   help="comma list of the positions it tells apart")
    d.add_argument("--hybrid", action="store_true",
                   help="--bandit-hybrid, the policy's constants the "
                   "tree's; writes bandit-hybrid.md")
    d.add_argument("--count-all", action="store_true",
                   help="with --hybrid, --bandit-count-all; writes "
                   "bandit-hybrid-all.md")
    d.add_argument("--rule-wakeup-cpu", type=int, default=None,
                   help="the rule's own price of a wakeup's CPU, which "
                   "also tells a long wait (default: --wakeup-cpu); "
                   "adds -ruleNS to the file's name")
    d.add_argument("--rule-max", type=int, default=None,
                   help="the longest time the rule plays (default: its "
                   "price); adds -maxNS to the file's name")
    n = sub.add_parser("pending")
    rule = n.add_mutually_exclusive_group()
    rule.add_argument("--cut", action="store_true",
                      help="--cut-rule, not --pending-rule")
    rule.add_argument("--idle", action="store_true",
                      help="--idle-rule, not --pending-rule")
    n.add_argument("--notifier", type=notifier_arg, default=None,
                   metavar="H", help="with --idle, handler H of the traces "
                   "is the AioContext's notifier (use with --only); auto: "
                   "found in each trace")
    n.add_argument("--calibrate", action="store_true",
                   help="both ways with the policy's wakeup constants set "
                   "to --wakeup-cpu and --wakeup-latency")
    x = sub.add_parser("context")
    x.add_argument("--classes", type=int, default=16)
    x.add_argument("--calibrate", action="store_true",
                   help="the policy's price of a wakeup's CPU set to "
                   "--wakeup-cpu")
    x.add_argument("--sees-arrivals", action="store_true",
                   help="the policy told when each slept wait's event came")
    for p in (v, e, t, k, n, w, b, x, g, d):  # replay the traces at a price
        p.add_argument("--traces", required=True)
        p.add_argument("--replay", required=True)
        p.add_argument("--out", required=True)
        p.add_argument("--wakeup-cpu", type=int, default=2000)
        p.add_argument("--wakeup-latency", type=int, default=2000)
        p.add_argument("--replay-arg", action="append", default=[],
                       help="an option for every replay (e.g. "
                       "--replay-arg=--no-after-recorded)")
    for p in (t, k, n, w, b, x, g, d):
        p.add_argument("--only", metavar="REGEX",
                       help="replay only the traces whose name matches; "
                       "the cost of entering poll mode is still the "
                       "median over every run of the recording")
    v.add_argument("--max-error", type=float, default=0.10)
    v.add_argument("--check", nargs="?", type=check_metrics, default=[],
                   const=list(METRICS))
    e.add_argument("--entries", default="0,median,3000,7000")
    r = sub.add_parser("rounds")
    r.add_argument("--traces", required=True, action="append",
                   help="a recording's folder (measured.csv); more than "
                   "one pools their rounds")
    r.add_argument("--wakeup-cpu", required=True,
                   help="ns, or a comma list of one per --traces")
    r.add_argument("--wakeup-latency", required=True,
                   help="ns, or a comma list of one per --traces")
    r.add_argument("--out", required=True)
    r.add_argument("--priced", action="append",
                   help="replay-priced.csv of a recording, one per --traces")
    rp = sub.add_parser("replicate")
    rp.add_argument("first", help="the first recording's rounds.csv")
    rp.add_argument("second", help="the second's, judged the same way")
    rp.add_argument("--out", required=True)
    m = sub.add_parser("merge")
    m.add_argument("measured")
    m.add_argument("new")
    a = ap.parse_args()
    if a.cmd == "merge":
        merge(a.measured, a.new)
        return 0
    if a.cmd == "convert":
        convert(a)
        return 0
    if a.cmd == "rounds":
        rounds(a)
        return 0
    if a.cmd == "replicate":
        replicate(a)
        return 0
    a.replay = os.path.abspath(a.replay)
    a.out = os.path.abspath(a.out)    # the replays run in the traces' folder
    if a.cmd == "sensitivity":
        sensitivity(a)
        return 0
    if a.cmd == "timeout0":
        timeout0(a)
        return 0
    if a.cmd == "calibrated":
        calibrated(a)
        return 0
    if a.cmd == "pending":
        if a.notifier is not None and not a.idle:
            ap.error("pending: --notifier goes with --idle")
        pending(a)
        return 0
    if a.cmd == "arrivals":
        arrivals(a)
        return 0
    if a.cmd == "bounds":
        bounds(a)
        return 0
    if a.cmd == "context":
        context(a)
        return 0
    if a.cmd == "constants":
        constants(a)
        return 0
    if a.cmd == "bandit" and a.count_all and not a.hybrid:
        sys.exit("evidence.py: bandit --count-all needs --hybrid")
    if a.cmd == "bandit":
        bandit(a)
        return 0
    return validate(a)


if __name__ == "__main__":
    sys.exit(main())
