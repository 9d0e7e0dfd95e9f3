#!/usr/bin/python3
"""Turn an iteration-trace log into a complete trace and measured figures.

Usage: complete.py LOG --out TRACE.gz [--window T0 T1] [--ios N]
                   [--sleep-ns NS] [--json FILE] [--header TEXT]...
                   [--ctx-rank K]

LOG holds the aio_poll_ready and aio_poll_iter lines that a build with
harness/replay/iter_trace.py writes (--trace enable=aio_poll_*,file=LOG).
The AioContext with the most blocking iterations is taken (the IOThread's),
or with --ctx-rank K the K-th after it (1: the second busiest; a venue with
two IOThreads gives a trace of each);
with --window (CLOCK_MONOTONIC seconds, e.g. fio's I/O window as the
benchmark runner measured it) only the iterations that started inside it.

Each blocking iteration becomes one line of the complete trace that
aio-poll-replay --priced reads:

    i <wait_ns> <end> <woken> <handlers> <polled_ns> <cap_ns> <set_ns> <nw>

  end       p: a polled handler was ready (polling could catch it), or
            nothing was but bottom halves ran: aio_notify() woke the loop,
            and polling catches that through the AioContext's notifier
            (then with no handler: none was dispatched, and no policy
            adjusts a handler for it);
            f: only fds without io_poll() (a socket); t: nothing (a timer)
  woken     1 if the wait slept: polling did not catch the event and the
            thread blocked in the fd wait (a voluntary context switch there;
            logs without one: the wait took longer than --sleep-ns); 2 if
            polling caught it; else 0 (the event was there when the fd wait
            began)
  wait_ns   from the start of aio_poll() to the end of the fd wait:
            the block_ns that aio_poll() measured and gave the run's policy,
            where the log has it (not 0), else the trace's own t_wait - t0
            (the line's other times count from the same start); if polling
            caught the event, the thread's CPU time of that polling (the
            trace's cpu_poll), which leaves out the time the thread was
            preempted
  polled_ns how long the recorded run polled (start of aio_poll() to the
            end of try_poll_mode()): an event of a polled handler that it
            slept for came after that; if polling caught the event, the
            block_ns that the policy saw (the log's, or else the wall clock
            to the end of the fd check)
  cap_ns    the most that any policy could have polled in this iteration:
            try_poll_mode() polls for no longer than the wait's timeout (a
            timer due, or 0 when bottom halves are pending) and not at all
            when the fd monitor needs a wait first; -1: no cap
  set_ns    the polling time that the recorded run's policy had set (before
            the cap), to check a replay of that policy iteration by
            iteration; -1: not recorded
  nw        1 if the fd monitor needed a wait first (need_wait(): io_uring
            after an fd event, a handler without io_poll()), so that no
            policy could poll (cap_ns is 0 then); the series' policy does
            not count such a wait (patch 13); 0 otherwise, and in traces
            of older traced builds
  handlers  the polled handlers that were ready, as ids in order of first
            appearance, comma separated; '-' for none

With --wakeups (the IOThreads' sched_waking events, `./apw evidence
--sched-wakeups`; of several threads, those of the one that ran the
AioContext: the one woken within 100 us before the end of at least 9 in
10 of its slept waits, where no other thread is in 3 in 4 of that many),
each line has a tenth field:

  arrive_ns if the wait slept, when the event that ended it came, from the
            start of aio_poll(): the last time the kernel woke the thread
            within the fd wait (the trace's clock, to the microsecond the
            tracer prints, taken at its middle and kept within the wait);
            -1 where the wait did not sleep or no wakeup was found in it

Where no thread stands out, complete.py stops; with --wakeups-if-known it
completes the trace without the wakeups, as without --wakeups, says so,
and the --json figures have "wakeups": false.

Measured over the same iterations (--json, and printed): iterations,
polling_ns (time from aio_poll()'s start to the end of try_poll_mode()),
polling_cpu_ns (the thread's CPU time over the same span: polling without
the time the thread was preempted; null for logs without cpu_poll), caught
(polling found the event), slept (woken above), wakeups (whether the
trace has the kernel's wakeups), full_polls and full_poll_excess_ns (the
waits that polled for their whole time, capped, and caught nothing, and
the median of their CPU time over that span less that time: with the
base of the iterations that did not poll taken off, the cost of
entering and leaving poll mode net of the checks before polling).
"""

import argparse
import bisect
import gzip
import io
import json
import re
import sys

READY = re.compile(r"aio_poll_ready ctx (\S+) node (\S+) polled (\d)")
ITER = re.compile(r"aio_poll_iter ctx (\S+) (?:blocking (\d) )?t0 (\d+) "
                  r"t_poll (\d+) t_wait (\d+) (?:cpu_poll (\d+) )?"
                  r"(?:slept (\d+) )?(?:cap (-?\d+) )?"
                  r"(?:poll_ns (\d+) )?(?:block_ns (\d+) )?"
                  r"(?:caught (\d) bh (\d) timers (\d)|flags (\d+))")


def iter_flags(m):
    """(caught, bh, need_wait) of an aio_poll_iter match, old or new
    format"""
    if m.group(14) is not None:
        f = int(m.group(14))
        return bool(f & 1), bool(f & 2), bool(f & 8)
    return m.group(11) == "1", m.group(12) == "1", False


def parse(path):
    """{ctx: [(t0, t_poll, t_wait, cpu_poll, slept, cap, poll_ns, caught,
    bh, need_wait, [(node, polled)], block_ns)]} of the blocking
    iterations; cpu_poll, slept, cap, poll_ns and block_ns are None in logs
    of older traced builds"""
    per_ctx, ready = {}, {}
    with open(path, errors="replace") as f:
        for line in f:
            m = READY.search(line)
            if m:
                ready.setdefault(m.group(1), []).append(
                    (m.group(2), m.group(3) == "1"))
                continue
            m = ITER.search(line)
            if not m:
                continue
            ctx = m.group(1)
            nodes = ready.pop(ctx, [])
            if m.group(2) == "0":
                continue
            # (newer traced builds log blocking iterations only)
            per_ctx.setdefault(ctx, []).append(
                (int(m.group(3)), int(m.group(4)), int(m.group(5)),
                 None if m.group(6) is None else int(m.group(6)),
                 None if m.group(7) is None else int(m.group(7)),
                 None if m.group(8) is None else int(m.group(8)),
                 None if m.group(9) is None else int(m.group(9)),
                 *iter_flags(m), nodes,
                 None if m.group(10) is None else int(m.group(10))))
    return per_ctx


WAKE = re.compile(r"\s(\d+)\.(\d{6}):\s+sched_waking:.*\bpid=(\d+)")


def parse_wakeups(path):
    """({thread id: sorted times in ns of the start of the microsecond of
    each of its sched_waking lines of @path}, events the tracer lost)"""
    times, lost = {}, 0
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("#"):
                m = re.search(r"overrun (\d+)", line)
                lost += int(m.group(1)) if m else 0
                continue
            m = WAKE.search(line)
            if m:
                times.setdefault(int(m.group(3)), []).append(
                    int(m.group(1)) * 1000000000 + int(m.group(2)) * 1000)
    for t in times.values():
        t.sort()
    return times, lost


def in_window(iters, window):
    """the iterations of @iters that began within @window (s), if any"""
    if not window:
        return iters
    return [it for it in iters if window[0] <= it[0] / 1e9 < window[1]]


def iter_slept(it, sleep_ns):
    """whether parse()'s iteration @it slept: its voluntary context
    switches, or for logs without them a wait longer than @sleep_ns"""
    t0, t_poll, t_wait, cpu_poll, vcsw, cap, pns, caught = it[:8]
    if vcsw is not None:
        return not caught and vcsw > 0
    return not caught and t_wait - t_poll > sleep_ns


# A slept wait's event woke its own thread a median of 4-32 us before the
# wait returned on the project's venues, 50 us at the 90th percentile
OWN_WAKEUP_NS = 100000


class ThreadUnknown(Exception):
    """thread_of() found no thread that stands out"""


def thread_of(iters, by_tid, sleep_ns):
    """the thread of @by_tid (parse_wakeups()) that ran the AioContext of
    @iters: the one woken within OWN_WAKEUP_NS before the end of the most
    of its slept waits.  Another IOThread's wakeups fall at random in
    them; raises ThreadUnknown unless the best thread has such a wakeup in
    9 of 10 slept waits and every other one in fewer than 3 of 4 of that"""
    slept = [it for it in iters if iter_slept(it, sleep_ns)]
    score = {}
    for tid, wakes in by_tid.items():
        n = 0
        for it in slept:
            k = bisect.bisect_right(wakes, it[2])
            n += k > 0 and wakes[k - 1] >= max(it[1] - 1000,
                                               it[2] - OWN_WAKEUP_NS)
        score[tid] = n
    ranked = sorted(score, key=lambda t: -score[t])
    best = ranked[0] if ranked else None
    if best is None or score[best] < 0.9 * len(slept) or \
            (len(ranked) > 1 and score[ranked[1]] >= 0.75 * score[best]):
        raise ThreadUnknown(
            "cannot tell which thread ran the AioContext from its wakeups "
            "(%s of %d slept waits)" % (
                ", ".join("%d: %d" % (t, score[t]) for t in ranked),
                len(slept)))
    return best


def arrival(wakes, t_poll, t_wait):
    """(when the event of a wait that slept from @t_poll to @t_wait came,
    the wakeups within it): the last wakeup in it, the middle of its
    microsecond, kept within the wait; None if there is none"""
    hi = bisect.bisect_right(wakes, t_wait)
    lo = bisect.bisect_right(wakes, t_poll - 1000)
    if hi <= lo:
        return None, 0
    return min(max(wakes[hi - 1] + 500, t_poll + 1), t_wait), hi - lo


def percentile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else None


def poll_cap(pns, cap):
    """how long try_poll_mode() polled for, caught nothing aside"""
    if pns is None:
        return 0
    return pns if cap is None or cap < 0 else min(pns, cap)


def cpu_base(iters):
    """the thread's mean CPU time in try_poll_mode() over the iterations
    of @iters that did not poll (the clock reads and the checks before
    polling, which every iteration pays); None where every iteration
    polled (the backport with patches 1-15 on the Intel host): unknown,
    not 0, and the caller takes the floor's instead.  Until 2026-12-06 it
    was 0 there, and those runs' polling was measured with every
    iteration's clock reads and checks in it, about 1 us per I/O"""
    b = [it[3] for it in iters if it[3] is not None and
         poll_cap(it[6], it[5]) == 0]
    return int(sum(b) / len(b)) if b else None


def wait_span(t0, t_poll, t_wait, caught, block_ns):
    """(start, wait, polled_ns) of a blocking iteration, before a caught
    wait is taken at its CPU time: where the wait starts, how long it
    lasted and how long the run polled in it.  The wait's times count
    from the start of aio_poll(): where the run's policy was given a
    block_ns, from where that block_ns began (its wait ends at t_wait),
    so that the wait is what the policy saw: at its growth boundary the
    tens of ns of clock reads between t0 and aio_poll()'s own start
    decide, and a thread preempted between the two saw a shorter wait
    than t_wait - t0"""
    start = t_wait - block_ns if block_ns and not caught else t0
    wait = (t_poll if caught else t_wait) - start
    polled_ns = (t_wait if caught else t_poll) - start
    if caught and block_ns:
        polled_ns = block_ns
    elif polled_ns < 0:
        # block_ns is shorter than t_wait - t_poll: the run's policy took
        # the wait's end where polling ended (no fd wait after it) and the
        # thread was held between the trace's own clock reads at polling's
        # end and at the wait's; it polled for the whole wait
        polled_ns = wait
    return start, wait, polled_ns


def complete(iters, window, sleep_ns, wakes=None):
    """(trace lines, measured figures); @wakes: parse_wakeups()'s times,
    which add each line's arrive_ns"""
    ids = {}
    lines = []
    lat = []
    # The thread's CPU time in try_poll_mode() when it did not poll (the
    # clock reads and the checks before polling) is what every iteration
    # pays, polling or not; what an iteration that polled and caught
    # nothing paid beyond that and its polling time is the cost of entering
    # and leaving poll mode
    iters = in_window(iters, window)
    base = cpu_base(iters)
    entry = [it[3] - (base or 0) - poll_cap(it[6], it[5]) for it in iters
             if it[3] is not None and poll_cap(it[6], it[5]) > 0 and
             not it[7]]
    # The waits that polled for their whole time and caught nothing: the
    # median of their CPU time in try_poll_mode() less that time, which
    # the caller takes the base from to get the cost of entering and
    # leaving poll mode (net of the checks before polling, which
    # run_poll_handlers() counts in its time; negative where they cost
    # more).  Unlike poll_entry_ns it leaves out the waits whose polling
    # was cut (the notifier, need_wait()), whose CPU is not their set time
    full = []
    meas = {"iterations": 0, "polling_ns": 0, "polling_cpu_ns": 0,
            "set_min": None, "cpu_base_ns": base,
            "poll_entry_ns": int(sum(entry) / len(entry)) if entry else None,
            "polled_iterations": len(entry),
            "caught": 0, "slept": 0, "need_wait": 0,
            "ends": {"p": 0, "f": 0, "t": 0},
            "wake_found": 0, "wake_multi": 0}
    for t0, t_poll, t_wait, cpu_poll, vcsw, cap, pns, caught, bh, nw, \
            nodes, block_ns in iters:
        polled = sorted({ids.setdefault(n, len(ids)) for n, p in nodes if p})
        if polled and max(polled) >= 64:
            sys.exit("complete.py: more than 64 polled handlers")
        # Bottom halves ran and no handler was ready: 'p' (polling catches
        # the aio_notify() that scheduled them, through the AioContext's
        # notifier) with no handler, since none was dispatched and no policy
        # adjusts one for it
        end = "p" if polled or (bh and not nodes) else "f" if nodes else "t"
        slept = iter_slept((t0, t_poll, t_wait, cpu_poll, vcsw, cap, pns,
                            caught), sleep_ns)
        start, wait, polled_ns = wait_span(t0, t_poll, t_wait, caught,
                                           block_ns)
        if caught and cpu_poll is not None:
            # what polling took to catch it, without preemption
            wait = min(wait, max(cpu_poll - (base or 0), 0))
        cap_ns = poll_cap(pns, cap)
        if cpu_poll is not None and not caught and cap_ns > 0 and \
                polled_ns >= cap_ns:
            full.append(cpu_poll - cap_ns)
        arrive = ""
        if wakes is not None:
            t, k = arrival(wakes, t_poll, t_wait) if slept else (None, 0)
            arrive = " %d" % (-1 if t is None else t - start)
            if slept:
                meas["wake_found"] += t is not None
                meas["wake_multi"] += k > 1
                if t is not None:
                    lat.append(t_wait - t)
        lines.append("i %d %s %d %s %d %d %d %d%s\n" % (
            wait, end, 2 if caught else int(slept),
            ",".join(map(str, polled)) or "-", polled_ns,
            -1 if cap is None else cap, -1 if pns is None else pns,
            int(nw), arrive))
        if pns is not None:
            meas["set_min"] = pns if meas["set_min"] is None \
                else min(meas["set_min"], pns)
        meas["iterations"] += 1
        meas["polling_ns"] += t_poll - t0
        if cpu_poll is None or meas["polling_cpu_ns"] is None:
            meas["polling_cpu_ns"] = None
        else:
            meas["polling_cpu_ns"] += cpu_poll
        meas["caught"] += caught
        meas["slept"] += slept
        meas["need_wait"] += nw
        meas["ends"][end] += 1
    meas["handlers"] = len(ids)
    meas["full_polls"] = len(full)
    meas["full_poll_excess_ns"] = int(percentile(full, 0.5)) if full \
        else None
    if wakes is not None:
        # from the event's wakeup to the end of the fd wait: the latency
        # of the slept waits' wakeups
        for q in (10, 50, 90):
            meas["wake_latency_p%d_ns" % q] = percentile(lat, q / 100)
    return lines, meas


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n", 2)[2])
    ap.add_argument("log")
    ap.add_argument("--out", help="complete trace (gzip if it ends in .gz)")
    ap.add_argument("--json", help="write the measured figures here")
    ap.add_argument("--window", nargs=2, type=float, metavar=("T0", "T1"))
    ap.add_argument("--ios", type=int, default=0,
                    help="the I/Os of the window, for the trace's header")
    ap.add_argument("--sleep-ns", type=int, default=4000,
                    help="an fd wait longer than this slept (default 4000)")
    ap.add_argument("--header", action="append", default=[])
    ap.add_argument("--ctx-rank", type=int, default=0,
                    help="take the AioContext with the K-th most blocking "
                    "iterations (0, the default: the most)")
    ap.add_argument("--wakeups", metavar="FILE",
                    help="the IOThread's sched_waking events (run.py "
                    "--sched-wakeups): add each line's arrive_ns")
    ap.add_argument("--wakeups-if-known", action="store_true",
                    help="with --wakeups: where they do not tell which "
                    "thread ran the AioContext, complete the trace without "
                    "them (as without --wakeups) and say so, instead of "
                    "stopping; the --json figures' 'wakeups' is false then")
    ap.add_argument("--idle-poll", action="store_true",
                    help="the run was 10.2.2's policy: write the least "
                    "polling time it set as '# idle-poll-ns', the time of "
                    "the handlers without events, which 10.2.2 never "
                    "adjusts (the replay starts every handler there)")
    a = ap.parse_args()

    per_ctx = parse(a.log)
    if not per_ctx:
        sys.exit("complete.py: no aio_poll_iter lines in %s (a build "
                 "without harness/replay/iter_trace.py?)" % a.log)
    ranked = sorted(per_ctx.items(), key=lambda kv: -len(kv[1]))
    if a.ctx_rank >= len(ranked):
        sys.exit("complete.py: %s has %d AioContexts with blocking "
                 "iterations, no rank %d" % (a.log, len(ranked), a.ctx_rank))
    ctx, iters = ranked[a.ctx_rank]
    wakes = None
    if a.wakeups:
        by_tid, lost = parse_wakeups(a.wakeups)
        if lost:
            sys.exit("complete.py: the tracer lost %d events of %s" % (
                lost, a.wakeups))
        # one thread's wakeups, or several IOThreads': those of the one
        # that ran this AioContext
        try:
            wakes = by_tid[thread_of(in_window(iters, a.window), by_tid,
                                     a.sleep_ns)] if len(by_tid) > 1 else \
                next(iter(by_tid.values()), [])
        except ThreadUnknown as e:
            if not a.wakeups_if_known:
                sys.exit("complete.py: %s" % e)
            print("complete.py: %s: completed without the wakeups" % e,
                  file=sys.stderr)
    lines, meas = complete(iters, a.window, a.sleep_ns, wakes)
    meas["wakeups"] = wakes is not None
    if not lines:
        sys.exit("complete.py: no iteration of %s in the window" % ctx)
    meas["ios"] = a.ios
    meas["ctx"] = ctx
    if a.out:
        # gzip without a name or time stamp: equal traces, equal files
        opener = (lambda p, m: io.TextIOWrapper(gzip.GzipFile(
            "", "wb", fileobj=open(p, "wb"), mtime=0))) \
            if a.out.endswith(".gz") else open
        with opener(a.out, "wt") as f:
            f.write("# aio-poll-replay complete trace: "
                    "i <wait_ns> <end> <woken> <handlers> <polled_ns> "
                    "<cap_ns> <set_ns> <nw>%s\n" % (
                        " <arrive_ns>" if wakes is not None else ""))
            for h in a.header:
                f.write("# %s\n" % h)
            f.write("# from %d blocking iterations of AioContext %s%s; "
                    "sleep threshold %d ns\n" % (
                        len(lines), ctx,
                        " in %.3f..%.3f s" % tuple(a.window) if a.window
                        else "", a.sleep_ns))
            f.write("# ios %d\n" % a.ios)
            if a.idle_poll and meas["set_min"] is not None:
                f.write("# idle-poll-ns %d\n" % meas["set_min"])
            f.writelines(lines)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(meas, f, indent=1, sort_keys=True)
            f.write("\n")
    print("complete.py: %s: %d iterations (p %d, f %d, t %d), %d handlers, "
          "polling %.3f ms, caught %d, slept %d" % (
              a.out or a.log, meas["iterations"], meas["ends"]["p"],
              meas["ends"]["f"], meas["ends"]["t"], meas["handlers"],
              meas["polling_ns"] / 1e6, meas["caught"], meas["slept"]))
    if wakes is not None:
        print("complete.py: %d of %d slept waits with their wakeup (%d "
              "with more than one); wakeup to the end of the wait: p10 %s, "
              "median %s, p90 %s ns" % (
                  meas["wake_found"], meas["slept"], meas["wake_multi"],
                  meas["wake_latency_p10_ns"], meas["wake_latency_p50_ns"],
                  meas["wake_latency_p90_ns"]))


if __name__ == "__main__":
    main()
