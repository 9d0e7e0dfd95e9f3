#!/usr/bin/python3
"""Unit tests of complete.py's choice of AioContext and of evidence.py's
runs with several IOThreads (one trace per AioContext, figures summed).

Run by ./apw test (evidence_check) before the replay of the recordings:
python3 harness/replay/test_evidence.py
"""

import argparse
import contextlib
import csv
import gzip
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
import unittest.mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import evidence  # noqa: E402
import own_cost  # noqa: E402
import build as replay_build  # noqa: E402

COMPLETE = os.path.join(HERE, "complete.py")


def iter_line(ctx, t0, caught=0):
    return ("aio_poll_iter ctx %s blocking 1 t0 %d t_poll %d t_wait %d "
            "cpu_poll 50 slept %d cap -1 poll_ns 0 caught %d bh 0 "
            "timers 0\n" % (ctx, t0, t0 + 100, t0 + 5000, 1 - caught,
                            caught))


class CompleteCtxRank(unittest.TestCase):
    """--ctx-rank K takes the AioContext with the K-th most blocking
    iterations, and fails with a clear error when there is no such
    context"""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.log = os.path.join(self.dir.name, "iter-trace.log")
        with open(self.log, "w") as f:
            t = 1000
            # ctx 0xa: 3 blocking iterations, ctx 0xb: 5, interleaved;
            # a non-blocking one of 0xa that does not count
            for k in range(5):
                if k < 3:
                    f.write("aio_poll_ready ctx 0xa node 0x1 polled 1\n")
                    f.write(iter_line("0xa", t))
                    t += 10000
                f.write("aio_poll_ready ctx 0xb node 0x2 polled 1\n")
                f.write(iter_line("0xb", t))
                t += 10000
            f.write("aio_poll_iter ctx 0xa blocking 0 t0 %d t_poll %d "
                    "t_wait %d caught 0 bh 0 timers 0\n" % (t, t, t))

    def tearDown(self):
        self.dir.cleanup()

    def run_rank(self, rank):
        js = os.path.join(self.dir.name, "m.json")
        out = os.path.join(self.dir.name, "t.trace")
        r = subprocess.run([sys.executable, COMPLETE, self.log, "--out", out,
                            "--json", js, "--ctx-rank", str(rank)],
                           capture_output=True, text=True)
        if r.returncode:
            return r.stderr
        with open(js) as f:
            return json.load(f)

    def test_ranks(self):
        m0, m1 = self.run_rank(0), self.run_rank(1)
        self.assertEqual((m0["ctx"], m0["iterations"]), ("0xb", 5))
        self.assertEqual((m1["ctx"], m1["iterations"]), ("0xa", 3))
        # a clear error, not a traceback
        self.assertIn("2 AioContexts with blocking iterations, no rank 2",
                      self.run_rank(2))


class CompleteNeedWait(unittest.TestCase):
    """Flag 8 of aio_poll_iter (the fd monitor needed a wait first) becomes
    the trace's last column and is counted; logs without it give 0"""

    def test_need_wait(self):
        with tempfile.TemporaryDirectory() as d:
            log, out = os.path.join(d, "l.log"), os.path.join(d, "t.trace")
            js = os.path.join(d, "m.json")
            with open(log, "w") as f:
                for k, flags in enumerate((0, 8, 8 | 2, 1)):
                    t = 1000 + k * 10000
                    f.write("aio_poll_ready ctx 0xa node 0x1 polled 1\n")
                    f.write("aio_poll_iter ctx 0xa t0 %d t_poll %d t_wait %d "
                            "cpu_poll 50 slept %d cap %d poll_ns 3000 "
                            "flags %d\n" % (t, t + 100, t + 5000,
                                            0 if flags & 1 else 1,
                                            0 if flags & 8 else -1, flags))
                f.write(iter_line("0xa", 50000))
            subprocess.run([sys.executable, COMPLETE, log, "--out", out,
                            "--json", js], check=True, capture_output=True)
            with open(out) as f:
                nw = [line.split()[8] for line in f if line.startswith("i ")]
            with open(js) as f:
                m = json.load(f)
        self.assertEqual(nw, ["0", "1", "1", "0", "0"])
        self.assertEqual(m["need_wait"], 2)


class CompleteBase(unittest.TestCase):
    """cpu_base_ns, the CPU time of try_poll_mode() in the iterations that
    did not poll, is None where every iteration polled: unknown, not 0,
    so that evidence.py takes the floor's time per iteration instead of
    measuring every iteration's clock reads as polling"""

    def base(self, poll_ns):
        with tempfile.TemporaryDirectory() as d:
            log, out = os.path.join(d, "l.log"), os.path.join(d, "t.trace")
            js = os.path.join(d, "m.json")
            with open(log, "w") as f:
                for k, pns in enumerate(poll_ns):
                    t = 1000 + k * 10000
                    f.write("aio_poll_ready ctx 0xa node 0x1 polled 1\n")
                    f.write("aio_poll_iter ctx 0xa t0 %d t_poll %d t_wait %d "
                            "cpu_poll %d slept 1 cap -1 poll_ns %d flags 0"
                            "\n" % (t, t + 100 + pns, t + 9000,
                                     250 + pns, pns))
            subprocess.run([sys.executable, COMPLETE, log, "--out", out,
                            "--json", js], check=True, capture_output=True)
            with open(js) as f:
                return json.load(f)["cpu_base_ns"]

    def test_every_iteration_polled(self):
        self.assertIsNone(self.base([2000, 2000, 4000]))
        self.assertEqual(self.base([2000, 0, 4000, 0]), 250)


class CutWaits(unittest.TestCase):
    """cut_waits.py: the waits that polled and caught nothing, by class
    (cut by the notifier or need_wait(), polled for their whole time,
    slept), each with its measured CPU above the base, the wall-clock
    polling, and the replay's charge (up to the cut for a cut wait) and
    the whole wait up to the time set"""

    def table(self, iters, with_base=True, measured=None):
        with tempfile.TemporaryDirectory() as d:
            log, out = os.path.join(d, "l.log"), os.path.join(d, "t.trace")
            cv = os.path.join(d, "c.csv")
            extra = []
            if measured:
                extra = ["--measured", os.path.join(d, "m.csv")]
                with open(extra[1], "w") as f:
                    f.write("trace,iterations,polling_cpu_overhead_ns,"
                            "cpu_base_ns\nt.trace,%d,%d,\n" % measured)
            with open(log, "w") as f:
                t = 1000
                if with_base:
                    # an iteration that did not poll: the base, 250 ns
                    f.write("aio_poll_iter ctx 0xa t0 %d t_poll %d t_wait "
                            "%d cpu_poll 250 slept 1 cap -1 poll_ns 0 "
                            "flags 0\n" % (t, t + 100, t + 9000))
                for tp, tw, cpu, slept, pns, *block in iters:
                    t += 20000
                    f.write("aio_poll_ready ctx 0xa node 0x1 polled 1\n")
                    f.write("aio_poll_iter ctx 0xa t0 %d t_poll %d t_wait "
                            "%d cpu_poll %d slept %d cap -1 poll_ns %d "
                            "%sflags 0\n" % (
                                t, t + tp, t + tw, cpu, slept, pns,
                                "block_ns %d " % block[0] if block else ""))
            subprocess.run([sys.executable, COMPLETE, log, "--out", out,
                            "--ios", "2"], check=True, capture_output=True)
            subprocess.run([sys.executable, os.path.join(HERE,
                                                         "cut_waits.py"),
                            log, out, "--csv", cv] + extra, check=True,
                           capture_output=True)
            with open(cv) as f:
                return list(csv.DictReader(f))[0]

    def test_classes(self):
        r = self.table([
            # cut at 300 of 2000 ns, the fd wait ends at 600: 500 ns CPU
            (300, 600, 750, 0, 2000),
            (500, 800, 850, 0, 2000),
            # polled its whole 1000 ns, the event there at 1100
            (1000, 1100, 1300, 0, 1000),
            # polled 1000 ns, then slept to 9000
            (1000, 9000, 1250, 1, 1000)])
        self.assertEqual(r["cpu_base_ns"], "250")
        self.assertEqual(r["cut_per_io"], "1.0")
        self.assertEqual(r["cut_cpu_ns"], "550")        # (500 + 600) / 2
        self.assertEqual(r["cut_wall_ns"], "400")
        self.assertEqual(r["cut_charge_ns"], "400")     # up to the cut
        self.assertEqual(r["cut_whole_ns"], "700")      # the whole wait
        self.assertEqual(r["full_per_io"], "0.5")
        self.assertEqual(r["full_charge_ns"], "1000")
        self.assertEqual(r["full_cpu_ns"], "1050")
        self.assertEqual(r["slept_charge_ns"], "1000")
        self.assertEqual(r["slept_whole_ns"], "1000")

    def test_held(self):
        """aio_poll()'s block_ns shorter than the fd wait after polling:
        the thread was held between the trace's clock reads, and the wait
        polled for all of what aio_poll() measured, as complete.py takes
        it (its polled_ns)"""
        r = self.table([(300, 600, 750, 0, 2000, 200)])
        self.assertEqual(r["cut_wall_ns"], "200")
        self.assertEqual(r["cut_charge_ns"], "200")
        self.assertEqual(r["cut_whole_ns"], "200")

    def test_no_base(self):
        """every iteration polled: the base is unknown, and so is the
        CPU above it"""
        r = self.table([(300, 600, 750, 0, 2000)], with_base=False)
        self.assertEqual(r["cpu_base_ns"], "")
        self.assertEqual(r["cut_cpu_ns"], "")
        self.assertEqual(r["cut_charge_ns"], "300")
        # ... unless the recording's measured.csv gives the floor's time
        # per iteration, as evidence.py's validation takes it
        r = self.table([(300, 600, 750, 0, 2000)], with_base=False,
                       measured=(4, 1000))
        self.assertEqual(r["cpu_base_ns"], "250")
        self.assertEqual(r["cut_cpu_ns"], "500")


class CompleteBlockNs(unittest.TestCase):
    """block_ns of aio_poll_iter, what aio_poll() gave the run's policy,
    is the trace's wait where polling did not catch the event, the line's
    other times then counting from where it began, and its polled_ns where
    polling caught it; 0 (no policy measured it) and logs without it keep
    the trace's own clock reads"""

    def waits(self, iters):
        """(wait_ns, polled_ns) of each trace line that complete.py makes
        of the aio_poll_iter lines @iters, each after a ready polled
        handler, and an older log's line after them"""
        with tempfile.TemporaryDirectory() as d:
            log, out = os.path.join(d, "l.log"), os.path.join(d, "t.trace")
            with open(log, "w") as f:
                for line in iters:
                    f.write("aio_poll_ready ctx 0xa node 0x1 polled 1\n")
                    f.write("aio_poll_iter ctx 0xa " + line + "\n")
                f.write(iter_line("0xa", 50000))
            subprocess.run([sys.executable, COMPLETE, log, "--out", out],
                           check=True, capture_output=True)
            with open(out) as f:
                return [(int(line.split()[1]), int(line.split()[5]))
                        for line in f if line.startswith("i ")]

    def test_block_ns(self):
        # slept, pending, caught (flag 1), slept without block_ns
        # measured, and an older log's line
        cols = self.waits(
            "t0 %d t_poll %d t_wait %d cpu_poll 3050 slept %d cap -1 "
            "poll_ns 4000 block_ns %d flags %d" % (
                t, t + 4100 if flags else t + 4000, t + 5000, slept, bns,
                flags)
            for t, (slept, flags, bns) in zip(
                range(1000, 40001, 10000),
                ((1, 0, 4990), (0, 0, 4040), (0, 1, 4970), (1, 0, 0))))
        # (wait_ns, polled_ns); the caught one's wait is its polling's CPU
        # time less the base of the iterations that did not poll (the last
        # one's 50 ns)
        # the other times of a line with block_ns count from where it
        # began: t_wait - block_ns (the pending one's 960 ns after t0, as
        # for a thread preempted before aio_poll() read the clock)
        self.assertEqual(cols, [(4990, 3990), (4040, 3040), (3000, 4970),
                                (5000, 4000), (5000, 100)])

    def test_held_after_polling(self):
        """a wait whose block_ns ended where polling did (no fd wait after
        it), the thread then held before the trace's clock read at the
        wait's end: its polling is the whole wait, never negative"""
        cols = self.waits(["t0 1000 t_poll 3300 t_wait 7348 cpu_poll 2200 "
                           "slept 0 cap -1 poll_ns 256 block_ns 2215 "
                           "flags 0"])
        self.assertEqual(cols[0], (2215, 2215))

    def test_arrival_from_block_ns(self):
        """a slept wait's arrive_ns counts from where its block_ns began,
        as its wait does, and so stays within it"""
        with tempfile.TemporaryDirectory() as d:
            log, out = os.path.join(d, "l.log"), os.path.join(d, "t.trace")
            wk = os.path.join(d, "w.txt")
            with open(log, "w") as f:
                # t0 1.000010 s; preempted 17 us before aio_poll()'s own
                # clock read: block_ns 16000 of t_wait - t0 = 33000
                f.write("aio_poll_ready ctx 0xa node 0x1 polled 1\n")
                f.write("aio_poll_iter ctx 0xa t0 1000010000 t_poll "
                        "1000029000 t_wait 1000043000 cpu_poll 2000 slept 1 "
                        "cap -1 poll_ns 2000 block_ns 16000 flags 0\n")
            with open(wk, "w") as f:
                f.write("# apw sched-wakeups: clock mono, overrun 0\n")
                f.write("  IO io1-7 [001] d..2. 1.000040: sched_waking: "
                        "comm=IO io1 pid=42 prio=120 target_cpu=001\n")
            subprocess.run([sys.executable, COMPLETE, log, "--out", out,
                            "--wakeups", wk], check=True,
                           capture_output=True)
            with open(out) as f:
                cols = [line.split() for line in f if line.startswith("i ")]
        # wait 16000 from 1.000027 s: polled 2000, the wakeup at 1.0000405
        # s 13500 ns in
        self.assertEqual((cols[0][1], cols[0][5], cols[0][9]),
                         ("16000", "2000", "13500"))


class CompleteWakeups(unittest.TestCase):
    """--wakeups: a slept wait's arrive_ns is the last sched_waking within
    its fd wait (the middle of its microsecond, kept within the wait); -1
    where none is in it; a wait that did not sleep gets -1 whatever the
    tracer saw; lost events are a clear error"""

    def run_complete(self, d, waking, header="# apw sched-wakeups: clock "
                     "mono, overrun 0\n"):
        log, out = os.path.join(d, "l.log"), os.path.join(d, "t.trace")
        wk, js = os.path.join(d, "w.txt"), os.path.join(d, "m.json")
        with open(log, "w") as f:
            # t0 of the iterations: 1.000010 s, 1.000110 s, 1.000210 s;
            # each polls 100 ns and waits until t0 + 5000 ns; the third
            # caught its event by polling
            for k in range(3):
                f.write("aio_poll_ready ctx 0xa node 0x1 polled 1\n")
                f.write(iter_line("0xa", 1000010000 + k * 100000,
                                  caught=int(k == 2)))
        with open(wk, "w") as f:
            f.write(header)
            for us in waking:
                f.write("  IO io1-7 [001] d..2. 1.%06d: sched_waking: "
                        "comm=IO io1 pid=42 prio=120 target_cpu=001\n" % us)
        r = subprocess.run([sys.executable, COMPLETE, log, "--out", out,
                            "--json", js, "--wakeups", wk],
                           capture_output=True, text=True)
        if r.returncode:
            return r.stderr, None
        with open(out) as f:
            arr = [int(line.split()[9]) for line in f
                   if line.startswith("i ")]
        with open(js) as f:
            return arr, json.load(f)

    def test_wakeups(self):
        with tempfile.TemporaryDirectory() as d:
            # the first wait: two wakeups in it (the last counts) and one
            # before it; the second: none in it; the third did not sleep
            arr, m = self.run_complete(d, [5, 11, 13, 212])
        self.assertEqual(arr, [3500, -1, -1])
        self.assertEqual((m["wake_found"], m["wake_multi"]), (1, 1))
        self.assertEqual(m["wake_latency_p50_ns"], 1500)

    def test_clamped(self):
        with tempfile.TemporaryDirectory() as d:
            # printed 1.000015 s, the last microsecond of the first wait:
            # its middle is past the wait's end, kept at the end
            arr, _ = self.run_complete(d, [15])
        self.assertEqual(arr, [5000, -1, -1])

    def test_lost(self):
        with tempfile.TemporaryDirectory() as d:
            err, _ = self.run_complete(d, [13], "# apw sched-wakeups: "
                                       "clock mono, overrun 7\n")
        self.assertIn("the tracer lost 7 events", err)


class CompleteWakeupsThreads(unittest.TestCase):
    """--wakeups with several IOThreads' wakeups in the file: each
    AioContext's slept waits take the wakeups of the thread woken near
    their end; where no thread stands out, a clear error"""

    def run_complete(self, d, rank, waking, extra=()):
        log, out = os.path.join(d, "l.log"), os.path.join(d, "t.trace")
        wk, js = os.path.join(d, "w.txt"), os.path.join(d, "m.json")
        with open(log, "w") as f:
            # AioContext 0xa: 10 waits from t0 = 1.000010 s + k ms, each
            # until t0 + 50 us; 0xb: 5 waits (rank 1), from 0.5 ms later,
            # each until t0 + 300 us
            for k in range(10):
                f.write("aio_poll_ready ctx 0xa node 0x1 polled 1\n")
                f.write(iter_line("0xa", 1000010000 + k * 1000000)
                        .replace("t_wait %d" % (1000015000 + k * 1000000),
                                 "t_wait %d" % (1000060000 + k * 1000000)))
            for k in range(5):
                f.write("aio_poll_ready ctx 0xb node 0x2 polled 1\n")
                f.write(iter_line("0xb", 1000510000 + k * 1000000)
                        .replace("t_wait %d" % (1000515000 + k * 1000000),
                                 "t_wait %d" % (1000810000 + k * 1000000)))
        with open(wk, "w") as f:
            f.write("# apw sched-wakeups: clock mono, overrun 0\n")
            for pid, us in waking:
                f.write("  <idle>-0 [001] d..2. 1.%06d: sched_waking: "
                        "comm=IO io%d pid=%d prio=120 target_cpu=001\n"
                        % (us, pid, pid))
        r = subprocess.run([sys.executable, COMPLETE, log, "--out", out,
                            "--wakeups", wk, "--ctx-rank", str(rank),
                            "--json", js] + list(extra),
                           capture_output=True, text=True)
        if r.returncode:
            return r.stderr
        with open(js) as f:
            self.assertIs(json.load(f)["wakeups"], True)
        with open(out) as f:
            return [int(line.split()[9]) for line in f
                    if line.startswith("i ")]

    def waking(self, a_pid=42, b_pid=43):
        # 0xa's events 40 us into its waits, 0xb's 290 us
        return [(a_pid, 50 + k * 1000) for k in range(10)] + \
            [(b_pid, 800 + k * 1000) for k in range(5)]

    def test_each_its_own(self):
        """each AioContext its own thread's wakeups, though the other
        thread was woken later within 3 of 0xa's waits"""
        waking = self.waking() + [(43, 55 + k * 1000) for k in range(3)]
        with tempfile.TemporaryDirectory() as d:
            a = self.run_complete(d, 0, waking)
            b = self.run_complete(d, 1, waking)
        # the middle of the microsecond: 40.5 us and 290.5 us in
        self.assertEqual(a, [40500] * 10)
        self.assertEqual(b, [290500] * 5)

    def test_other_thread_early(self):
        """another thread woken in each of 0xb's waits, 5 us in and so
        more than 100 us before their end, is not taken for theirs"""
        with tempfile.TemporaryDirectory() as d:
            b = self.run_complete(d, 1, self.waking() +
                                  [(42, 515 + k * 1000) for k in range(5)])
        self.assertEqual(b, [290500] * 5)

    def test_too_few(self):
        """a thread woken near the end of only half of 0xa's slept waits,
        with no other in the running: refused, not taken"""
        waking = [w for w in self.waking() if w[0] != 42 or w[1] % 2000 < 1000]
        with tempfile.TemporaryDirectory() as d:
            err = self.run_complete(d, 0, waking)
        self.assertIn("cannot tell which thread ran the AioContext", err)
        self.assertIn("42: 5 ", err.replace(",", " "))

    def test_ambiguous(self):
        """both threads woken near the end of 0xb's waits: refused"""
        with tempfile.TemporaryDirectory() as d:
            err = self.run_complete(d, 1, self.waking() +
                                    [(42, 805 + k * 1000) for k in range(5)])
        self.assertIn("cannot tell which thread ran the AioContext", err)
        self.assertIn("42: 5", err)

    def test_if_known(self):
        """--wakeups-if-known: the same as test_ambiguous completes the
        trace without the wakeups (nine fields a line, 'wakeups' false in
        the figures), and says so; where the thread is known it changes
        nothing"""
        with tempfile.TemporaryDirectory() as d:
            # writes the files, and fails on the thread
            self.run_complete(d, 1, self.waking() +
                              [(42, 805 + k * 1000) for k in range(5)])
            js = os.path.join(d, "m.json")
            r = subprocess.run([sys.executable, COMPLETE,
                                os.path.join(d, "l.log"), "--out",
                                os.path.join(d, "t.trace"), "--wakeups",
                                os.path.join(d, "w.txt"), "--ctx-rank", "1",
                                "--json", js, "--wakeups-if-known"],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("completed without the wakeups", r.stderr)
            with open(os.path.join(d, "t.trace")) as f:
                lens = {len(line.split()) for line in f
                        if line.startswith("i ")}
            self.assertEqual(lens, {9})
            with open(js) as f:
                self.assertIs(json.load(f)["wakeups"], False)
            a = self.run_complete(d, 0, self.waking(),
                                  ["--wakeups-if-known"])
        self.assertEqual(a, [40500] * 10)


class CompleteBottomHalves(unittest.TestCase):
    """An iteration in which bottom halves ran and no handler was ready
    ends 'p' with no handler: no policy adjusts a handler for it (10.2.2
    and patches 1-8 keep per-handler state, which a made-up handler for
    it would drive); one with a ready handler keeps it"""

    def test_bh_only(self):
        with tempfile.TemporaryDirectory() as d:
            log, out = os.path.join(d, "l.log"), os.path.join(d, "t.trace")
            with open(log, "w") as f:
                for k, (flags, ready) in enumerate(((2, False), (2, True),
                                                    (0, False))):
                    t = 1000 + k * 10000
                    if ready:
                        f.write("aio_poll_ready ctx 0xa node 0x1 polled 1\n")
                    f.write("aio_poll_iter ctx 0xa t0 %d t_poll %d t_wait %d "
                            "cpu_poll 50 slept 0 cap 0 poll_ns 0 flags %d\n"
                            % (t, t + 100, t + 5000, flags))
            subprocess.run([sys.executable, COMPLETE, log, "--out", out],
                           check=True, capture_output=True)
            with open(out) as f:
                ends = [tuple(line.split()[2:5:2]) for line in f
                        if line.startswith("i ")]
        self.assertEqual(ends, [("p", "-"), ("p", "0"), ("t", "-")])


def row(trace, polling_cpu, overhead, vcsw=8, ios=10):
    return {"venue": "guest8x2", "workload": "randread", "variant": "w3",
            "round": "1", "ios": str(ios), "polling_ns": "0",
            "polling_overhead_ns": "0", "polling_cpu_ns": str(polling_cpu),
            "polling_cpu_overhead_ns": str(overhead), "vcsw": str(vcsw),
            "trace": trace}


def priced(trace, policy, polling, wakeups, ios=10):
    return {"trace": trace, "policy": policy, "polling_ns": str(polling),
            "wakeups": str(wakeups), "cpu_ns": str(polling + wakeups * 100),
            "added_latency_ns": str(wakeups * 10), "ios": str(ios)}


class SeveralIOThreads(unittest.TestCase):
    """A run with two traces is compared as one: the replay's figures of
    both traces against the polling of both and the run's wakeups"""

    def setUp(self):
        self.parts = [row("a.trace.gz", 1700, 200),
                      row("b.trace.gz", 1600, 100)]
        self.by = {(p["trace"], p["policy"]): p for p in [
            priced("a.trace.gz", "series-w3", 1000, 3),
            priced("b.trace.gz", "series-w3", 2000, 5),
            priced("a.trace.gz", "unpatched", 1, 1)]}

    def test_group(self):
        other = dict(self.parts[0], round="2")
        runs = evidence.group_runs(self.parts + [other])
        self.assertEqual(len(runs), 2)
        self.assertEqual(len(runs[("guest8x2", "randread", "w3", "1")]), 2)

    def test_summed(self):
        s = evidence.summed(self.by, self.parts, "series-w3")
        self.assertEqual((s["polling_ns"], s["wakeups"], s["cpu_ns"],
                          s["added_latency_ns"], s["ios"]),
                         (3000, 8, 3800, 80, 10))
        # a trace without that policy: no figure for the run
        self.assertIsNone(evidence.summed(self.by, self.parts, "unpatched"))

    def test_compare(self):
        vrows = []
        pred = evidence.summed(self.by, self.parts, "series-w3")
        worst = evidence.compare(vrows, "run", "series-w3", "own", pred, 10,
                                 self.parts)
        got = {r["metric"]: (r["predicted"], r["measured"], r["error"])
               for r in vrows}
        # measured polling: (1700 - 200) + (1600 - 100) over 10 I/Os;
        # wakeups: the run's 8, counted once
        self.assertEqual(got["polling_ns_per_io"], (300.0, 300.0, 0.0))
        self.assertEqual(got["wakeups_per_io"], (0.8, 0.8, 0.0))
        # polling under 1 us per I/O is not judged: only the wakeups count
        self.assertEqual(worst, {"wakeups_per_io": 0.0})

    def test_check_metrics(self):
        """--check names the metrics it holds to --max-error"""
        self.assertEqual(evidence.check_metrics("wakeups_per_io"),
                         ["wakeups_per_io"])
        self.assertEqual(evidence.check_metrics(
            "polling_ns_per_io,wakeups_per_io"), list(evidence.METRICS))
        for bad in ("", "wakeups", "wakeups_per_io,cpu"):
            with self.assertRaises(argparse.ArgumentTypeError):
                evidence.check_metrics(bad)

    def test_over_limit(self):
        """only the checked metrics fail, and only past the limit"""
        worst = {"polling_ns_per_io": 0.172, "wakeups_per_io": 0.011}
        self.assertEqual(evidence.over_limit(worst, ["wakeups_per_io"],
                                             0.10), [])
        self.assertEqual(evidence.over_limit(worst, list(evidence.METRICS),
                                             0.10), ["polling_ns_per_io"])
        self.assertEqual(evidence.over_limit(worst, [], 0.0), [])
        worst["wakeups_per_io"] = 0.139
        self.assertEqual(evidence.over_limit(worst, ["wakeups_per_io"],
                                             0.10), ["wakeups_per_io"])


class MeasuredPolling(unittest.TestCase):
    """A run's polling is its CPU time in try_poll_mode() less its own
    iterations' cost there when they do not poll (cpu_base_ns), not the
    floor's: a policy that never polls measures 0 however much more its
    try_poll_mode() costs than the floor's"""

    def test_own_base(self):
        run = {"polling_cpu_ns": "5000", "iterations": "10",
               "cpu_base_ns": "300", "polling_cpu_overhead_ns": "2000",
               "polling_ns": "0", "polling_overhead_ns": "0"}
        self.assertEqual(evidence.measured_polling(run), 2000)
        never = dict(run, polling_cpu_ns="3000")
        self.assertEqual(evidence.measured_polling(never), 0)
        # recordings without cpu_base_ns: less the floor's
        old = dict(run, cpu_base_ns="")
        self.assertEqual(evidence.measured_polling(old), 3000)


def stalled_trace(d):
    """@d/t.trace.gz: a complete trace with one stall of 10000 ns"""
    with gzip.open(os.path.join(d, "t.trace.gz"), "wt") as f:
        f.write("i 4000 p 0 0 2000 0 8000 1\n"
                "i 20500 p 0 0 20000 -1 8000 0\n")
    evidence.trace_stalls.cache_clear()


class RunEntry(unittest.TestCase):
    """The diagnosis charges a trace the entry cost its own run measured,
    less its stalls per polling wait, only where that is an average over
    100 polling iterations or more (and never below 0); otherwise the
    median of all runs"""

    def test_threshold(self):
        with tempfile.TemporaryDirectory() as d:
            stalled_trace(d)
            r = {"trace": "t.trace.gz", "poll_entry_ns": "2500",
                 "polled_iterations": "100"}
            self.assertEqual(evidence.run_entry(d, r, 1000), 2400)
            self.assertEqual(evidence.run_entry(
                d, dict(r, polled_iterations="99"), 1000), 1000)
            self.assertEqual(evidence.run_entry(
                d, dict(r, poll_entry_ns=""), 1000), 1000)
            self.assertEqual(evidence.run_entry(
                d, dict(r, poll_entry_ns="50"), 1000), 0)


class FullEntry(unittest.TestCase):
    """Rows converted since 2026-12-06, late evening, carry the median CPU
    of the waits that polled for their whole time less that time
    (complete.py's full_poll_excess_ns): less the base, the cost of
    entering and leaving poll mode, charged as it is, negative too, with
    no stalls taken off (a median); rows without it keep poll_entry_ns,
    never below 0"""

    def test_full_entry(self):
        with tempfile.TemporaryDirectory() as d:
            stalled_trace(d)        # which the median leaves out
            r = {"venue": "g", "workload": "qd1", "variant": "w3",
                 "round": "1", "trace": "t.trace.gz",
                 "poll_entry_ns": "-900", "polled_iterations": "200",
                 "full_polls": "100", "full_poll_excess_ns": "90",
                 "cpu_base_ns": "250", "iterations": "400",
                 "polling_cpu_overhead_ns": "96000"}
            self.assertEqual(evidence.full_entry(r), -160)
            self.assertEqual(evidence.run_entry(d, r, 1000), -160)
            # a run whose every iteration polled: the floor's base
            self.assertEqual(evidence.full_entry(dict(r, cpu_base_ns="")),
                             90 - 240)
            # too few full polls, or a row converted before: poll_entry_ns,
            # stalls taken off, 0 where negative
            for old in (dict(r, full_polls="99"),
                        dict(r, full_polls="", full_poll_excess_ns="")):
                self.assertIsNone(evidence.full_entry(old))
                self.assertEqual(evidence.run_entry(d, old, 1000), 0)
                self.assertEqual(evidence.run_entry(
                    d, dict(old, poll_entry_ns="2500"), 1000), 2450)
            other = [dict(r, variant=v, trace="o%d" % i,
                          full_poll_excess_ns=str(x))
                     for i, (v, x) in enumerate((("w1", 50), ("w2", 70),
                                                 ("w4", 130)))]
            self.assertEqual(evidence.venue_entry(d, other + [r], [r], 0),
                             70 - 250)
            self.assertEqual(evidence.poll_entry(other + [r], d), 90 - 250)

    def test_complete(self):
        """complete.py: the median over the waits that polled for their
        whole (capped) time and caught nothing, of their CPU less that
        time; not the waits whose polling was cut, nor caught ones"""
        with tempfile.TemporaryDirectory() as d:
            log, out = os.path.join(d, "l.log"), os.path.join(d, "t.trace")
            js = os.path.join(d, "m.json")
            with open(log, "w") as f:
                t = 1000
                for tp, tw, cpu, slept, pns, caught in (
                        (2000, 9000, 1800, 1, 2000, 0),     # full: -200
                        (2100, 9000, 1950, 1, 2000, 0),     # full: -50
                        (1000, 1200, 1000, 0, 1000, 0),     # full: 0
                        (300, 600, 550, 0, 2000, 0),        # cut
                        (700, 700, 900, 0, 2000, 1)):       # caught
                    t += 20000
                    f.write("aio_poll_ready ctx 0xa node 0x1 polled 1\n")
                    f.write("aio_poll_iter ctx 0xa t0 %d t_poll %d t_wait "
                            "%d cpu_poll %d slept %d cap -1 poll_ns %d "
                            "flags %d\n" % (t, t + tp, t + tw, cpu, slept,
                                            pns, caught))
            subprocess.run([sys.executable, COMPLETE, log, "--out", out,
                            "--json", js], check=True, capture_output=True)
            with open(js) as f:
                m = json.load(f)
            self.assertEqual(m["full_polls"], 3)
            self.assertEqual(m["full_poll_excess_ns"], -50)


class VenueEntry(unittest.TestCase):
    """The validation charges a run the median of the entry costs that the
    other runs of its venue and workload measured, less their stalls: never
    its own figure (for a venue with several IOThreads, none of its
    traces'), never another venue's or workload's; 0 where that median is
    negative; the median of all runs where no other run has a figure"""

    def test_venue_entry(self):
        with tempfile.TemporaryDirectory() as d:
            with gzip.open(os.path.join(d, "t.trace.gz"), "wt") as f:
                f.write("i 4000 p 0 0 2000 0 8000 1\n")
            evidence.trace_stalls.cache_clear()

            def row(venue, wl, variant, entry, trace="t.trace.gz"):
                return {"venue": venue, "workload": wl, "variant": variant,
                        "round": "1", "trace": trace,
                        "poll_entry_ns": str(entry),
                        "polled_iterations": "100"}
            own = [row("g", "qd1", "w1", 9000), row("g", "qd1", "w1", 8000)]
            for i, r in enumerate(own):
                r["trace"] = "own-%d" % i
            measured = own + [
                row("g", "qd1", "w2", 300), row("g", "qd1", "w3", 500),
                row("g", "qd1", "w4", 700),
                # another workload, another venue, too few polls
                row("g", "qd8", "w2", 5000), row("n", "qd1", "w2", 5000),
                dict(row("g", "qd1", "unpatched", 100),
                     polled_iterations="99")]
            # the own traces have no file: they must not be read
            self.assertEqual(
                evidence.venue_entry(d, measured, own, 1234), 500)
            # an even count: the upper of the two middle figures
            self.assertEqual(evidence.venue_entry(
                d, measured + [row("g", "qd1", "new", 600)], own, 1234), 600)
            self.assertEqual(evidence.venue_entry(
                d, own + [row("g", "qd1", "w2", -50)], own, 1234), 0)
            self.assertEqual(evidence.venue_entry(d, own, own, 1234), 1234)
            # the median of all runs, which venue_entry() falls back on,
            # is not negative either (the replay refuses a negative cost)
            self.assertEqual(evidence.poll_entry(
                [row("n", "qd8", "w3", -112)], d), 0)
            self.assertEqual(evidence.poll_entry(
                [row("n", "qd8", "w3", 300)], d), 300)


class Stalls(unittest.TestCase):
    """trace_stalls(): the waits that polled, caught nothing and found a
    polled handler's event there, but whose polling ended past the time
    set, by how much (less the median time of the waits that did not
    poll); the entry cost is the run's own less its stalls per polling
    wait; the same figures as aio-poll-replay's (tests/priced-stall.trace)"""

    def trace(self, lines):
        path = os.path.join(self.dir.name, "t.trace.gz")
        with gzip.open(path, "wt") as f:
            f.write("# ios 3\n" + "".join(line + "\n" for line in lines))
        evidence.trace_stalls.cache_clear()
        return path

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def test_stalls(self):
        path = self.trace([
            # did not poll: 1000, 2000 and 3000 ns to the end of polling
            "i 4000 p 0 0 1000 0 8000 1",
            "i 4000 f 1 - 3000 -1 0 0",
            "i 4000 t 1 - 2000 0 0 0",
            # held 30000 ns past its 8000 ns
            "i 40500 p 0 0 40000 -1 8000 0",
            # capped at 5000 ns by the timeout: held 43000 ns
            "i 50500 p 0 0 50000 5000 8000 0",
            # not stalls: the event came after sleeping, or polling caught
            # it, or an fd's, or the polling ended in time
            "i 60000 p 1 0 40000 -1 8000 0",
            "i 30000 p 2 0 40000 -1 8000 0",
            "i 40500 f 0 - 40000 -1 8000 0",
            "i 9500 p 0 0 9000 -1 8000 0",
        ])
        self.assertEqual(evidence.trace_stalls(path), (73000, 2))
        r = {"trace": os.path.basename(path), "poll_entry_ns": "20000",
             "polled_iterations": "100"}
        # 20000 - 73000 / 100
        self.assertEqual(evidence.stall_free_entry(self.dir.name, r), 19270)
        self.assertIsNone(evidence.stall_free_entry(
            self.dir.name, dict(r, polled_iterations="99")))

    def test_no_set_times(self):
        # a trace without the recorded polling and set times has none
        path = self.trace(["i 40500 p 0 0 40000 -1 -1 0",
                           "i 4000 p 0 0"])
        self.assertEqual(evidence.trace_stalls(path), (0, 0))


class Merge(unittest.TestCase):
    """merge replaces the rows of the venues the new file has, and keeps
    the others"""

    def test_merge(self):
        def csvrow(venue, variant):
            r = {k: "" for k in evidence.MEASURED_FIELDS}
            r.update(venue=venue, variant=variant, trace=venue + variant)
            return r

        with tempfile.TemporaryDirectory() as d:
            old, new = os.path.join(d, "old.csv"), os.path.join(d, "new.csv")
            for path, rows in ((old, [csvrow("guest", "w3"),
                                      csvrow("guest8x2", "w3"),
                                      csvrow("nbd", "w3")]),
                               (new, [csvrow("guest8x2", "new")])):
                with open(path, "w", newline="") as f:
                    w = csv.DictWriter(f, fieldnames=evidence.MEASURED_FIELDS)
                    w.writeheader()
                    w.writerows(rows)
            evidence.merge(old, new)
            with open(old, newline="") as f:
                got = [r["trace"] for r in csv.DictReader(f)]
        self.assertEqual(got, ["guestw3", "nbdw3", "guest8x2new"])


class RoundRatios(unittest.TestCase):
    """rounds compares the whole series with another variant within each
    round, on the runs' own measures priced, and leaves out the rounds
    that lack either run"""

    def run_row(self, variant, rnd, polling, vcsw, trace=None):
        return dict(row(trace or "%s-%d" % (variant, rnd), polling, 0,
                        vcsw=vcsw, ios=10),
                    variant=variant, round=str(rnd), iterations="0",
                    cpu_base_ns="0")

    def test_paired(self):
        rows = [self.run_row("new", 1, 100, 2),
                self.run_row("unpatched", 1, 400, 1),
                self.run_row("new", 2, 100, 2),
                self.run_row("unpatched", 2, 400, 1),
                # a round without 10.2.2's run: not a pair
                self.run_row("new", 3, 900, 9),
                # two traces of one run: polling summed, wakeups once
                self.run_row("w3", 1, 300, 1, "w3-1-t1"),
                self.run_row("w3", 1, 300, 1, "w3-1-t2")]
        got = {r[2]: r for r in evidence.round_ratios([(rows, 100, 1000)])}
        # CPU per run: (polling + wakeups x 100) / 10 I/Os;
        # new 300/10, unpatched 500/10, w3 (600 + 100)/10
        self.assertEqual(got["CPU vs 10.2.2"][5], [0.6, 0.6])
        self.assertEqual(got["CPU vs 10.2.2"][4], "met")
        self.assertAlmostEqual(got["CPU vs patches 1-8 w3"][5][0], 3 / 7)
        self.assertEqual(len(got["CPU vs patches 1-8 w3"][5]), 1)
        self.assertEqual(got["CPU vs patches 1-8 w3"][4], "not resolved")
        # latency: wakeups x 1000, twice 10.2.2's
        self.assertEqual(got["latency vs 10.2.2"][5], [2.0, 2.0])
        self.assertEqual(got["latency vs 10.2.2"][4], "missed")
        # no floor run: no ratio, no verdict
        self.assertEqual(got["CPU vs the floor"][5], [])
        self.assertIsNone(got["CPU vs the floor"][3])

    def test_pooled(self):
        """two recordings: each run priced at its own recording's price,
        each round paired within its recording (both have a round 1), the
        rounds pooled"""
        a = [self.run_row("new", 1, 100, 2),
             self.run_row("unpatched", 1, 400, 1)]
        b = [self.run_row("new", 1, 100, 1),
             self.run_row("unpatched", 1, 100, 1),
             # 10.2.2 without its round-2 partner in this recording
             self.run_row("unpatched", 2, 100, 1)]
        got = {r[2]: r for r in evidence.round_ratios([(a, 100, 1000),
                                                        (b, 300, 10)])}
        # a: (100 + 2 x 100) / (400 + 100); b: (100 + 300) / (100 + 300)
        self.assertEqual(got["CPU vs 10.2.2"][5], [0.6, 1.0])
        self.assertEqual(got["latency vs 10.2.2"][5], [2.0, 1.0])
        self.assertEqual(evidence.per_recording("5", 2, "x"), [5, 5])
        self.assertEqual(evidence.per_recording("5,6", 2, "x"), [5, 6])
        with self.assertRaises(SystemExit):
            evidence.per_recording("5,6", 3, "x")

    def test_replication(self):
        """a second recording's verdicts against the first's, cell by
        cell; cells without a verdict are left out"""
        def cell(ratio, verdict, wl="w"):
            return {"venue": "v", "workload": wl, "ratio": ratio,
                    "verdict": verdict}
        first = [cell("a", "met"), cell("b", "met"), cell("c", "met"),
                 cell("d", "not resolved"), cell("e", "not resolved"),
                 cell("f", "missed"), cell("floor", ""),
                 cell("a", "met", "absent")]
        second = [cell("a", "met"), cell("b", "not resolved"),
                  cell("c", "missed"), cell("d", "met"),
                  cell("e", "not resolved"), cell("f", "met"),
                  cell("floor", "")]
        got = {r[2]: r[5] for r in evidence.replication(first, second)}
        self.assertEqual(got, {"a": "replicated", "b": "not contradicted",
                               "c": "contradicted",
                               "d": "resolved by the second",
                               "e": "not resolved by either",
                               "f": "contradicted"})

    def test_references(self):
        """each run of the whole series over its own trace's optimum and
        best fixed time, summed over its traces; other variants' runs and
        runs without references are left out"""
        rows = [self.run_row("new", 1, 100, 2, "n1-t1.trace.gz"),
                self.run_row("new", 1, 200, 2, "n1-t2.trace.gz"),
                self.run_row("new", 2, 100, 2, "n2.trace.gz"),
                self.run_row("unpatched", 1, 400, 1, "u1.trace.gz")]

        def ref(trace, policy, cpu):
            return {"trace": trace, "policy": policy, "polling_ns": "0",
                    "wakeups": "0", "cpu_ns": str(cpu),
                    "added_latency_ns": "0", "ios": "10"}

        priced = [ref("n1-t1", "optimum", 200), ref("n1-t2", "optimum", 300),
                  ref("n1-t1", "best-fixed", 250),
                  ref("n1-t2", "best-fixed", 250),
                  ref("u1", "optimum", 1), ref("u1", "best-fixed", 1)]
        got = evidence.own_references(rows, priced, 100)
        # run 1: 300 of polling + 2 wakeups x 100 = 500 over 500 and 500;
        # run 2 has no references
        self.assertEqual(got, {("guest8x2", "randread"): [(1.0, 1.0)]})
        priced[0]["cpu_ns"] = "100"
        got = evidence.own_references(rows, priced, 100)
        self.assertEqual(got[("guest8x2", "randread")], [(1.25, 1.0)])


class Bounds(unittest.TestCase):
    """evidence.py bounds: the clairvoyant references over the optimum"""

    def test_ranges(self):
        """each column's range over the traces, and patches 1-13 over the
        least clairvoyant reference of each trace, whichever that is"""
        def rows(opt, new, **refs):
            d = {"optimum": opt, "new-w3": new, "unpatched": 2 * opt,
                 "best-fixed": 1.5 * opt}
            for n, _ in evidence.CLAIRVOYANT[1:]:
                d[n] = refs.get(n.replace("clairvoyant-", "").
                                replace("-", "_"), 1.5 * opt)
            return {k: {"cpu_ns": str(int(v))} for k, v in d.items()}

        by = {"a": rows(100, 140, prev2=110),
              "b": rows(200, 260, since_long=250, window=120)}
        got = evidence.bound_ranges(by, ["a", "b"])
        names = [n for _, n in evidence.BOUND_COLUMNS]
        self.assertEqual(len(got), len(names) + 1)
        self.assertEqual(got[names.index("unpatched")], (2.0, 2.0))
        self.assertEqual(got[names.index("new-w3")], (1.3, 1.4))
        self.assertEqual(got[names.index("clairvoyant-prev2")], (1.1, 1.5))
        self.assertEqual(got[names.index("clairvoyant-window")], (0.6, 1.5))
        # a: 140 / 110 (prev2); b: 260 / 120 (window)
        self.assertAlmostEqual(got[-1][0], 140 / 110)
        self.assertAlmostEqual(got[-1][1], 260 / 120)


STUB_COMPLETE = r"""
import json, sys
a = sys.argv
if "--fail" in open(a[1]).read():
    sys.exit("complete.py: something else")
if "--wakeups" in a and "--wakeups-if-known" not in a:
    sys.exit("complete.py: cannot tell which thread ran the AioContext "
             "from its wakeups (4: 8, 5: 1 of 10 slept waits)")
json.dump({"iterations": 10, "polling_ns": 5, "polling_cpu_ns": None,
           "caught": 1, "slept": 9, "wakeups": False},
          open(a[a.index("--json") + 1], "w"))
"""


class ConvertWithoutWakeups(unittest.TestCase):
    """A run whose wakeups do not tell which thread ran the AioContext is
    converted without them; any other failure still stops"""

    def test_fallback(self):
        with tempfile.TemporaryDirectory() as d:
            stub = os.path.join(d, "complete.py")
            with open(stub, "w") as f:
                f.write(STUB_COMPLETE)
            log = os.path.join(d, "iter-trace.log")
            with open(log, "w") as f:
                f.write("ok\n")
            with open(os.path.join(d, "sched-wakeups.txt"), "w") as f:
                f.write("")
            row = {"venue": "nbd", "workload": "w", "variant": "new",
                   "round": "1", "props": "", "iops": "1", "ios": "4",
                   "lat_mean_us": "1", "window_t0": "0", "window_t1": "1",
                   "iothread_vcsw": "9", "iothread_cpu_ms": "1"}
            a = argparse.Namespace(traces=d, sleep_ns=4000)
            old = evidence.COMPLETE
            evidence.COMPLETE = stub
            try:
                with contextlib.redirect_stderr(io.StringIO()) as err:
                    m = evidence.convert_one(a, row, log, 0, 1)
                self.assertEqual(m["slept"], 9)
                self.assertIn("without the kernel's wakeups", err.getvalue())
                self.assertFalse(os.path.exists(
                    os.path.join(d, "wakeups.csv")))
                with open(log, "w") as f:
                    f.write("--fail\n")
                with contextlib.redirect_stderr(io.StringIO()):
                    with self.assertRaises(subprocess.CalledProcessError):
                        evidence.convert_one(a, row, log, 0, 1)
            finally:
                evidence.COMPLETE = old


class Constants(unittest.TestCase):
    """constants_row() counts the traces where patches 1-13's policy
    misses each replay target, with the largest ratio"""

    def test_row(self):
        def rows(new, unpatched, series, lat_new, lat_unpatched):
            return {"new-w3": {"cpu_ns": new, "added_latency_ns": lat_new},
                    "unpatched": {"cpu_ns": unpatched,
                                  "added_latency_ns": lat_unpatched},
                    "series-w3": {"cpu_ns": series,
                                  "added_latency_ns": 0}}
        by = {"a": rows("100", "100", "99", "105", "100"),
              "b": rows("98", "100", "100", "106", "100"),
              "c": rows("101", "100", "102", "100", "0")}
        r = evidence.constants_row(by)
        self.assertEqual(r[0], 1)                   # c over 10.2.2's CPU
        self.assertAlmostEqual(r[1], 1.01)
        self.assertEqual(r[2], 1)                   # a over patches 1-8's
        self.assertAlmostEqual(r[3], 100 / 99)
        self.assertEqual(r[4], 2)                   # b, and c (no latency)
        self.assertAlmostEqual(r[5], 100.0)         # c: 100 over max(0, 1)


class BanditRow(unittest.TestCase):
    """bandit_row(): the rule's own rows (new-w3) judged against the
    references of the replay without it"""

    def test_row(self):
        def rows(new, unpatched, optimum):
            return {"new-w3": {"cpu_ns": new, "added_latency_ns": "100"},
                    "unpatched": {"cpu_ns": unpatched,
                                  "added_latency_ns": "100"},
                    "series-w3": {"cpu_ns": unpatched,
                                  "added_latency_ns": "100"},
                    "optimum": {"cpu_ns": optimum,
                                "added_latency_ns": "0"}}
        # the replay without the rule: new-w3 over 1.25x on both traces
        refs = {"nbd-a": rows("130", "131", "100"),
                "guest-b": rows("140", "150", "100")}
        # with it (no references: its other rows are zero)
        mine = {"nbd-a": rows("120", "0", "0"),
                "guest-b": rows("151", "0", "0")}
        r = evidence.bandit_row(refs, mine, ["nbd-a"])
        self.assertEqual(r[0], 1)                   # guest-b over 10.2.2
        self.assertAlmostEqual(r[1], 151 / 150)
        self.assertEqual(r[6], 1)                   # guest-b over 1.25x
        self.assertAlmostEqual(r[7], 1.51)
        self.assertEqual(r[8:], [1.2, 1.2])         # nbd-a: 120 / 100
        self.assertEqual(refs["nbd-a"]["new-w3"]["cpu_ns"], "130")
        self.assertEqual(evidence.bandit_row(refs, mine, [])[8:], [0, 0])


class BanditWays(unittest.TestCase):
    """bandit_ways(): the rule's own price and longest time, by default
    the replay's price, and the file's name that says which"""

    def ways(self, **kw):
        a = argparse.Namespace(every="8", near="0,150", classes="4",
                               hybrid=True, count_all=True,
                               wakeup_cpu=20498, rule_wakeup_cpu=None,
                               rule_max=None)
        vars(a).update(kw)
        return evidence.bandit_ways(a)

    def option(self, args, name):
        return args[args.index(name) + 1]

    def test_default(self):
        name, _, cpu, top, ways = self.ways()
        self.assertEqual((name, cpu, top),
                         ("bandit-hybrid-all", "20498", "20498"))
        self.assertEqual([t for t, _ in ways],
                         [("8", "0", "4"), ("8", "150", "4")])
        for _, args in ways:
            self.assertEqual(self.option(args, "--bandit-wakeup-cpu"),
                             "20498")
            self.assertEqual(self.option(args, "--bandit-max"), "20498")
            self.assertIn("--bandit-count-all", args)

    def test_own_price(self):
        name, what, cpu, top, ways = self.ways(rule_wakeup_cpu=8000)
        self.assertEqual((name, cpu, top),
                         ("bandit-hybrid-all-rule8000", "8000", "8000"))
        self.assertIn("--bandit-wakeup-cpu 8000", what)
        for _, args in ways:
            self.assertEqual(self.option(args, "--bandit-wakeup-cpu"),
                             "8000")
            self.assertEqual(self.option(args, "--bandit-max"), "8000")
            self.assertNotIn("20498", args)
        name, _, _, top, ways = self.ways(rule_wakeup_cpu=8000,
                                          rule_max=32768)
        self.assertEqual((name, top),
                         ("bandit-hybrid-all-rule8000-max32768", "32768"))
        self.assertEqual(self.option(ways[0][1], "--bandit-max"), "32768")

    def test_not_hybrid(self):
        name, _, _, _, ways = self.ways(hybrid=False, rule_wakeup_cpu=8000)
        self.assertEqual(name, "bandit-rule8000")
        self.assertEqual(self.option(ways[0][1], "--policy-wakeup-cpu"),
                         "8000")
        self.assertNotIn("--bandit-hybrid", ways[0][1])


class Calibrated(unittest.TestCase):
    """calibrated: the policy's constants at the replay's price, or at
    --policy-cpu/--policy-latency, in a file named after them"""

    def run_calibrated(self, cpu=None, lat=None):
        a = argparse.Namespace(wakeup_cpu=2146, wakeup_latency=4057,
                               policy_cpu=cpu, policy_latency=lat)
        calls = []
        with unittest.mock.patch.object(
                evidence, "counterfactual",
                lambda a, extra, name, what: calls.append((extra, name))):
            evidence.calibrated(a)
        self.assertEqual(len(calls), 1)
        return calls[0]

    def test_at_the_price(self):
        self.assertEqual(self.run_calibrated(),
                         (["--policy-wakeup-cpu", "2146",
                           "--policy-wakeup-latency", "4057"], "calibrated"))

    def test_policy_apart(self):
        self.assertEqual(self.run_calibrated(1458, 10000),
                         (["--policy-wakeup-cpu", "1458",
                           "--policy-wakeup-latency", "10000"],
                          "calibrated-1458-10000"))
        # the one not given stays the replay's
        self.assertEqual(self.run_calibrated(cpu=1458),
                         (["--policy-wakeup-cpu", "1458",
                           "--policy-wakeup-latency", "4057"],
                          "calibrated-1458-4057"))
        self.assertEqual(self.run_calibrated(lat=10000),
                         (["--policy-wakeup-cpu", "2146",
                           "--policy-wakeup-latency", "10000"],
                          "calibrated-2146-10000"))


class Pending(unittest.TestCase):
    """pending: --pending-rule or --cut-rule, both ways with the price's
    constants with --calibrate, in a file named after them"""

    def run_pending(self, cut, calibrate, idle=False, notifier=None):
        a = argparse.Namespace(wakeup_cpu=1862, wakeup_latency=3706,
                               cut=cut, calibrate=calibrate, idle=idle,
                               notifier=notifier)
        calls = []
        with unittest.mock.patch.object(
                evidence, "counterfactual",
                lambda a, extra, name, what, base=():
                calls.append((extra, name, list(base)))):
            evidence.pending(a)
        self.assertEqual(len(calls), 1)
        return calls[0]

    def test_rules(self):
        self.assertEqual(self.run_pending(False, False),
                         (["--pending-rule"], "pending", []))
        self.assertEqual(self.run_pending(True, False),
                         (["--cut-rule"], "pending-cut", []))

    def test_idle(self):
        self.assertEqual(self.run_pending(False, False, idle=True),
                         (["--idle-rule"], "pending-idle", []))
        self.assertEqual(self.run_pending(False, True, idle=True,
                                          notifier=0),
                         (["--idle-rule", "--notifier", "0"],
                          "pending-idle-notifier0-cpu",
                          ["--policy-wakeup-cpu", "1862",
                           "--policy-wakeup-latency", "3706"]))

    def test_notifier_auto(self):
        self.assertEqual(self.run_pending(False, False, idle=True,
                                          notifier="auto"),
                         (["--idle-rule", "--notifier", "auto"],
                          "pending-idle-notifierauto", []))

    def test_notifier_arg(self):
        self.assertEqual(evidence.notifier_arg("auto"), "auto")
        self.assertEqual(evidence.notifier_arg("0"), 0)
        self.assertEqual(evidence.notifier_arg("63"), 63)
        for bad in ("64", "-1", "x", "Auto"):
            with self.assertRaises(argparse.ArgumentTypeError):
                evidence.notifier_arg(bad)

    def test_calibrated(self):
        # the constants in both ways, not only after
        price = ["--policy-wakeup-cpu", "1862",
                 "--policy-wakeup-latency", "3706"]
        self.assertEqual(self.run_pending(False, True),
                         (["--pending-rule"], "pending-cpu", price))
        self.assertEqual(self.run_pending(True, True),
                         (["--cut-rule"], "pending-cut-cpu", price))


class CounterfactualRows(unittest.TestCase):
    """counterfactual()'s CSV: each trace's ratios before and after"""

    @staticmethod
    def rows(new_cpu, lat=100):
        return {"new-w3": {"cpu_ns": new_cpu, "added_latency_ns": lat},
                "best-fixed": {"cpu_ns": 100},
                "optimum": {"cpu_ns": 50},
                "unpatched": {"cpu_ns": 400, "added_latency_ns": 50}}

    def test_rows(self):
        by = [{"b.gz": self.rows(200), "a.gz": self.rows(100)},
              {"b.gz": self.rows(150), "a.gz": self.rows(100)}]
        groups = {("nbd", "qd8", "own"): ["b.gz"],
                  ("guest", "qd1", "floor"): ["b.gz", "a.gz"]}
        got = evidence.counterfactual_rows(by, groups)
        self.assertEqual(len(evidence.COUNTERFACTUAL_COLUMNS), len(got[0]))
        # the groups in order, each's traces in order
        self.assertEqual([r[:5] for r in got],
                         [["a.gz", "guest", "qd1", "floor", 0],
                          ["b.gz", "guest", "qd1", "floor", 1],
                          ["b.gz", "nbd", "qd8", "own", 1]])
        # best fixed, optimum, 10.2.2's CPU, 10.2.2's latency
        self.assertEqual(got[1][5:],
                         ["2.0000", "1.5000", "4.0000", "3.0000",
                          "0.5000", "0.3750", "2.0000", "2.0000"])


class OnlyTraces(unittest.TestCase):
    """--only: the traces replayed, matched anywhere in the name"""

    def test_only(self):
        ts = ["nbd-randread-8k-qd8-new-r1.trace.gz",
              "nbd-randread-8k-qd1-rate-new-r1.trace.gz",
              "guest-randread-8k-qd8-floor-r2.trace.gz"]
        self.assertEqual(evidence.only_traces(ts, None), ts)
        self.assertEqual(evidence.only_traces(ts, "qd8"), [ts[0], ts[2]])
        self.assertEqual(evidence.only_traces(ts, "^nbd-randread-8k-qd8-"),
                         ts[:1])
        self.assertEqual(evidence.only_traces(ts, "guest8"), [])


def write_gz(path, lines):
    with gzip.open(path, "wt") as f:
        f.write("".join(l + "\n" for l in lines))


class KernelLatency(unittest.TestCase):
    """arrivals' second table: each slept wait's latency from the kernel's
    wakeup to the end of the wait, summed per I/O"""

    HEADER = ["# aio-poll-replay complete trace: i <wait_ns> <end> "
              "<woken> <handlers> <polled_ns> <cap_ns> <set_ns> <nw> "
              "<arrive_ns>", "# ios 10"]

    def test_sum(self):
        """slept waits with their wakeup count, from arrive_ns to the end;
        timers, waits without a wakeup and waits that did not sleep do
        not"""
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "t.trace.gz")
            write_gz(path, self.HEADER + [
                "i 20000 p 1 0 0 -1 0 0 3000",      # 17000
                "i 30000 f 1 - 0 -1 0 0 10000",     # 20000
                "i 50000 t 1 - 0 -1 0 0 40000",     # a timer's
                "i 20000 p 1 0 0 -1 0 0 -1",        # no wakeup recorded
                "i 5000 p 0 - 0 0 0 1 -1",          # did not sleep
                "i 4000 p 2 0 3000 -1 8000 0 -1"])  # caught by polling
            self.assertEqual(evidence.kernel_latency(path), (37000, 2))

    def test_table(self):
        """patches 1-13 over 10.2.2 and patches 1-8 within each round; the
        latency per I/O and the count of slept waits; a round without the
        other variant's run is left out"""
        runs = {("new", 1): [9000, 11000], ("unpatched", 1): [10000],
                ("w3", 1): [10000, 10000],
                ("new", 2): [20000], ("unpatched", 2): [9500],
                ("new", 3): [2000]}
        with tempfile.TemporaryDirectory() as d:
            measured, wake = [], {}
            for (variant, rnd), lats in runs.items():
                trace = "%s-r%d.trace.gz" % (variant, rnd)
                write_gz(os.path.join(d, trace), self.HEADER + [
                    "i %d p 1 0 0 -1 0 0 1000" % (1000 + x) for x in lats])
                measured.append({"venue": "nbd", "workload": "qd8",
                                 "variant": variant, "round": str(rnd),
                                 "ios": "10", "trace": trace})
                wake[trace] = {}
            text = evidence.measured_latency_table(d, measured, wake)
        rows = [l.split(" | ") for l in text.splitlines()
                if l.startswith("| nbd |")]
        self.assertEqual(len(rows), 2)
        # vs 10.2.2: rounds 1 and 2, 20000/10000 and 20000/9500 per I/O
        # (slept waits 2/1 and 1/1): 2.05x, its interval above 1.05
        self.assertEqual(rows[0][2], "vs 10.2.2")
        self.assertEqual(rows[0][3], "2")
        self.assertTrue(rows[0][4].endswith("missed"), rows[0][4])
        # vs patches 1-8: round 1 alone, 20000 over 20000, waits 2 over 2
        self.assertEqual(rows[1][3], "1")
        self.assertTrue(rows[1][4].startswith("1.00"), rows[1][4])
        self.assertTrue(rows[1][5].startswith("1.00"), rows[1][5])
        # patches 1-13's latency per wakeup over its three runs: 42000 ns
        # over 4 waits
        self.assertEqual(rows[0][6], "10.5 |")



class OwnCost(unittest.TestCase):
    """own_cost.py: the policy's polling and bookkeeping per I/O over the
    floor's CPU per I/O of the same round and of the long runs; a run with
    two IOThreads counts the iterations of both"""

    def write(self, path, fields, rows):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields)
            w.writeheader()
            w.writerows(rows)

    def test_rows(self):
        with tempfile.TemporaryDirectory() as d:
            ev, lr = os.path.join(d, "ev"), os.path.join(d, "long")
            m = ["venue", "workload", "variant", "round", "ios",
                 "iterations", "polled_iterations", "poll_entry_ns",
                 "trace"]
            self.write(os.path.join(ev, "traces", "measured.csv"), m, [
                dict(zip(m, r)) for r in (
                    ("g", "rate", "new", "1", "1000", "4000", "10", "600",
                     "g-rate-new-r1.trace.gz"),
                    ("g", "rate", "floor", "1", "1000", "4000", "0", "",
                     "g-rate-floor-r1.trace.gz"),
                    ("g2", "rate", "new", "1", "1000", "2000", "5", "-90",
                     "g2-rate-new-r1-t1.trace.gz"),
                    ("g2", "rate", "new", "1", "1000", "1000", "0", "",
                     "g2-rate-new-r1-t2.trace.gz"))])
            v = ["trace", "policy", "metric", "measured", "source"]
            self.write(os.path.join(ev, "replay-validation.csv"), v, [
                dict(zip(v, r)) for r in (
                    ("g-rate-new-r1", "new-w3", "polling_ns_per_io", "10",
                     "own"),
                    ("g-rate-new-r1", "new-w3", "wakeups_per_io", "99",
                     "own"),
                    ("g2-rate-new-r1", "new-w3", "polling_ns_per_io", "0",
                     "own"))])
            b = ["venue", "workload", "variant", "round", "status",
                 "iothread_sched_ms_per_kio"]
            self.write(os.path.join(ev, "bench", "samples.csv"), b, [
                dict(zip(b, r)) for r in (
                    ("g", "rate", "floor", "0", "ok", "999"),
                    ("g", "rate", "floor", "1", "ok", "50"),
                    ("g2", "rate", "floor", "1", "ok", "80"))])
            self.write(os.path.join(lr, "samples.csv"), b, [
                dict(zip(b, r)) for r in (
                    ("g", "rate", "series-floor", "1", "ok", "20"),
                    ("g", "rate", "series-floor", "2", "ok", "40"),
                    ("g", "rate", "w3", "1", "ok", "1"))])
            rows = own_cost.rows(ev, [lr], 176, 1.0)
        self.assertEqual(len(rows), 2)
        g, g2 = rows
        # 10 ns of polling + 4 iterations x 176 ns + 10 entries of 600 ns
        # for 1000 I/Os, over 50 us per I/O
        self.assertEqual(g[:3], ("g", "rate", "1"))
        self.assertAlmostEqual(g[5], 710)
        self.assertAlmostEqual(g[7], 720 / 50000)
        # the long runs' series-floor median, 30 us
        self.assertAlmostEqual(g[8], 30000)
        self.assertAlmostEqual(g[9], 720 / 30000)
        # two IOThreads: 3000 iterations for 1000 I/Os, a negative entry
        # cost taken as the recording's median of the positive ones (600:
        # 5 x 600 ns); no long run
        self.assertAlmostEqual(g2[4], 3.0)
        self.assertAlmostEqual(g2[7], 531 / 80000)
        self.assertIsNone(g2[8])


class ReplayBuild(unittest.TestCase):
    """build.py compiles the tool with the reference test's flags, less
    that test's own include folders, and links it with the test's inputs
    but its own object."""

    REF = "tests/unit/test-aio-poll-weight"

    def test_commands(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "compile_commands.json"), "w") as f:
                json.dump([{
                    "directory": d,
                    "file": "../" + self.REF + ".c",
                    "command": "ccache cc -m64 -Itests/unit -I../tests/unit "
                    "-Iinclude -O2 -MD -MQ x.o -MF x.d -o " + self.REF
                    + ".p/t.c.o -c ../" + self.REF + ".c"}], f)
            with open(os.path.join(d, "build.ninja"), "w") as f:
                f.write("rule c_LINKER\n"
                        " command = cc $ARGS -o $out $in $LINK_ARGS\n"
                        "build " + self.REF + ": c_LINKER " + self.REF
                        + ".p/t.c.o libqemuutil.a.p/x.o | dep\n"
                        " LINK_ARGS = -Wl,--start-group libqemuutil.a "
                        "-lglib-2.0 -Wl,--end-group\n")
            cmds = replay_build.commands(d, "/src/tool.c", "/out/tool")
        (what, cc, cwd), (what2, link, lcwd) = cmds
        self.assertEqual((what, cwd, what2, lcwd),
                         ("compile", d, "link", d))
        self.assertEqual(cc, ["cc", "-m64", "-Iinclude", "-O2", "-o",
                              "/out/tool.o", "-c", "/src/tool.c"])
        self.assertEqual(link, ["cc", "-o", "/out/tool",
                                "libqemuutil.a.p/x.o", "/out/tool.o",
                                "-Wl,--start-group", "libqemuutil.a",
                                "-lglib-2.0", "-Wl,--end-group"])

if __name__ == "__main__":
    unittest.main()
