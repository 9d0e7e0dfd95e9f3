#!/usr/bin/python3
"""Offline tests of the benchmark's parsing and reporting (no QEMU, no
guest): /usr/bin/python3 -m unittest discover -s harness/bench -p 'test_*.py'
"""

import contextlib
import csv
import io
import json
import math
import os
import stat
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import unittest.mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bases  # noqa: E402
import compare_runs  # noqa: E402
import guest  # noqa: E402
import hangs  # noqa: E402
import pair  # noqa: E402
import price  # noqa: E402
import report  # noqa: E402
import run  # noqa: E402
import stats  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(HERE), "upstream"))
import policy  # noqa: E402


def fio_json(ios=1000, iops=100.0, mean_ns=2000.0, p50=1500, p99=9000):
    empty = {"total_ios": 0, "iops": 0.0, "lat_ns": {"mean": 0.0}}
    return {"jobs": [{
        "read": {"total_ios": ios, "iops": iops,
                 "lat_ns": {"mean": mean_ns, "percentile": {
                     "50.000000": p50, "99.000000": p99}}},
        "write": empty, "trim": empty}]}


class Emit(unittest.TestCase):
    """stats.emit(): a report to its file, if any, and to standard output"""

    def test_emit(self):
        import contextlib
        import io
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "r.md")
            for out in (path, None):
                buf = io.StringIO()
                with contextlib.redirect_stdout(buf):
                    stats.emit("| a |\n", out)
                self.assertEqual(buf.getvalue(), "| a |\n")
            with open(path) as f:
                self.assertEqual(f.read(), "| a |\n")


class Pair(unittest.TestCase):
    """pair.py: two variants of one run, round by round, every metric"""

    @staticmethod
    def row(cpu, vcsw, iops, lat):
        return {stats.IO_CPU: cpu, "iothread_vcsw_per_kio": vcsw,
                "iops": iops, "lat_mean_us": lat}

    def test_pair(self):
        rows = {("g", "sat", "w3"): {1: self.row(8, 2, 100, 50),
                                     2: self.row(18, 2, 100, 50),
                                     3: self.row(5, 2, 100, 50)},
                ("g", "sat", "p15"): {1: self.row(4, 2, 100, 100),
                                      2: self.row(9, 2, 200, 100)},
                ("g", "rate", "w3"): {1: self.row(1, 1, 1, 1)},
                ("n", "sat", "p15"): {1: self.row(1, 1, 1, 1)}}
        got = pair.pair(rows, "w3", "p15")
        # only where both ran, and only the rounds both ran
        self.assertEqual([(v, w) for v, w, _ in got], [("g", "sat")])
        cells = dict(got[0][2])
        self.assertEqual(list(cells), [l for _, l in pair.METRICS])
        cpu = cells["IOThread CPU per I/O"]
        self.assertEqual((cpu[0], cpu[3]), (2.0, 2))     # 8/4 and 18/9
        self.assertAlmostEqual(cells["IOPS"][0], math.sqrt(0.5))
        self.assertEqual(cells["mean latency"][0], 0.5)
        text = pair.table(got, "w3", "p15")
        self.assertIn("w3 over p15", text)
        self.assertIn("| g, sat | 2.00 [2.00, 2.00] (2) |", text)
        # the thread groups, where asked: a column each, n/a where a run
        # has no such column
        rows[("g", "sat", "w3")][1]["worker_cpu_ms_per_kio"] = 3
        rows[("g", "sat", "w3")][2]["worker_cpu_ms_per_kio"] = 8
        rows[("g", "sat", "p15")][1]["worker_cpu_ms_per_kio"] = 1.5
        rows[("g", "sat", "p15")][2]["worker_cpu_ms_per_kio"] = 4
        got = pair.pair(rows, "w3", "p15", pair.METRICS + pair.THREADS)
        cells = dict(got[0][2])
        self.assertEqual(cells["workers' CPU per I/O"][0], 2.0)
        self.assertIsNone(cells["vCPU CPU per I/O"])
        text = pair.table(got, "w3", "p15")
        self.assertIn("| workers' CPU per I/O |", text)
        self.assertIn("| 2.00 [2.00, 2.00] (2) | n/a |", text)

    def test_pool(self):
        # --pool: a second run's rounds counted with the first's, paired
        # within each run (w3 over series-floor is 1.00 in every round of
        # the first run and 1.04 in every round of the second)
        rows = PairedReport().rows()
        with tempfile.TemporaryDirectory() as d:
            dirs = []
            for k in (1, 2):
                run = os.path.join(d, "run%d" % k)
                os.makedirs(run)
                with open(os.path.join(run, "samples.csv"), "w",
                          newline="") as f:
                    w = csv.DictWriter(f, fieldnames=list(rows[0]))
                    w.writeheader()
                    for r in rows:
                        r = dict(r)
                        if r["variant"] == "w3":
                            drift = 1.0 + 0.3 * (int(r["round"]) % 2)
                            r[stats.IO_CPU] = str(drift * (96 + 4 * k))
                        w.writerow(r)
                dirs.append(run)
            out = os.path.join(d, "pair.md")
            with unittest.mock.patch.object(
                    sys, "argv", ["pair.py", dirs[0], "w3", "series-floor",
                                  "--pool", dirs[1], "--out", out]), \
                    contextlib.redirect_stdout(io.StringIO()):
                self.assertEqual(pair.main(), 0)
            with open(out) as f:
                text = f.read()
            # rounds 1-5 of each run (round 0 is the warm-up): 10 pooled
            self.assertIn("(10) |", text)
            self.assertIn("| guest8x2, randread-8k-qd8-j4 | 1.02 [", text)


class Price(unittest.TestCase):
    """price.py: the prices of the measured-price patch's trace event"""

    def test_prices_and_share(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "raw", "r0"))
            with open(os.path.join(d, "raw", "r0", "trace.log"), "w") as f:
                for i, ns in enumerate([8000] * price.SKIP + [900, 1100, 1000]):
                    f.write("poll_wakeup_price ctx 0xa ns %d\n" % ns)
                    if i == 2:
                        f.write("poll_wakeup_price ctx 0xb ns 5\n")
                        f.write("poll_grow ctx 0xa old 0 new 1\n")
            by = price.prices(os.path.join(d, "raw", "r0", "trace.log"))
            self.assertEqual(sorted(by), ["0xa", "0xb"])
            # the first SKIP left out of the median, not of the count
            self.assertEqual(price.summary(by["0xa"]), (13, 1000, 900, 1100))
            self.assertEqual(price.summary(by["0xb"]), (1, 5, 5, 5))
            cost = os.path.join(d, "wakeup-cost.csv")
            with open(cost, "w") as f:
                f.write("backend,kind,iterations,delay_ns,waiter_cpu_median_ns\n"
                        "io_uring,sleep,1,1,2000\nio_uring,ready,1,1,750\n"
                        "io_uring,spin,1,1,50000\nepoll,sleep,1,1,1800\n"
                        "epoll,ready,1,1,600\n")
            self.assertEqual(price.waiter_share(cost), 1250)


class Parsing(unittest.TestCase):
    def test_stat_ticks_with_odd_comm(self):
        # comm may hold spaces and ')'; fields 14 and 15 are utime, stime.
        line = "123 (IO io1) x) S 1 2 3 4 5 6 7 8 9 10 250 70 0 0 20 0"
        self.assertEqual(run.stat_ticks(line), 320)

    def test_fio_metrics(self):
        m = run.fio_metrics(fio_json())
        self.assertEqual(m["ios"], 1000)
        self.assertEqual(m["lat_mean_us"], 2.0)
        self.assertEqual(m["lat_p99_us"], 9.0)

    def test_fio_metrics_rejects_no_io(self):
        with self.assertRaises(ValueError):
            run.fio_metrics(fio_json(ios=0))

    def test_json_after_noise(self):
        text = "fio: some warning\n" + json.dumps(fio_json()) + "\ntrailer"
        self.assertEqual(run.parse_json_text(text)["jobs"][0]["read"]["iops"], 100.0)

    def test_window_and_per_kio(self):
        tck = run.CLK_TCK
        s0 = {"t": 1.0, "qemu": 0, "io": 0, "sched": 0, "vcsw": 7, "nvcsw": 1}
        s1 = {"t": 11.0, "qemu": 2 * tck, "io": tck, "sched": 10 ** 9,
              "vcsw": 1007, "nvcsw": 3}
        row = dict(run.window_metrics(s0, s1), ios=4000)
        row = run.finish_row(row)
        self.assertEqual(row["qemu_cpu_ms"], 2000.0)
        self.assertEqual(row["iothread_vcsw"], 1000)
        self.assertEqual(row["iothread_nvcsw"], 2)
        self.assertEqual(row["iothread_vcsw_per_kio"], 250.0)
        self.assertEqual(row["iothread_cpu_ms_per_kio"], 250.0)
        self.assertEqual(row["iothread_sched_ms_per_kio"], 250.0)

    def test_cat_snapshot(self):
        text = ("100.50 3.00\n"
                "9 (qemu-storage-da) S 1 2 3 4 5 6 7 8 9 10 5 5 0 0\n"
                "10 (qemu-storage-da) S 1 2 3 4 5 6 7 8 9 10 3 1 0 0\n"
                "123456 0 7\n")
        s = run.parse_cat_snapshot(text)
        self.assertEqual((s["t"], s["qemu"], s["io"], s["sched"]),
                         (100.5, 10, 4, 123456))
        self.assertNotIn("vcsw", s)
        s = run.parse_cat_snapshot(text + "Name:\tIO io1\n"
                                   "voluntary_ctxt_switches:\t42\n"
                                   "nonvoluntary_ctxt_switches:\t5\n")
        self.assertEqual((s["vcsw"], s["nvcsw"], s["sched"]), (42, 5, 123456))
        self.assertNotIn("steal", s)
        s1 = run.parse_cat_snapshot(
            text + "voluntary_ctxt_switches:\t42\n"
            "cpu  357195 0 121138 3855257 20985 0 1260 20333 0 0\n"
            "cpu0 194796 0 60980 1971042 13461 0 71 12036 0 0\n")
        self.assertEqual(s1["steal"], 20333)

    def test_steal_over_the_window(self):
        tck = run.CLK_TCK
        s0 = {"t": 1.0, "qemu": 0, "io": 0, "sched": 0, "steal": 100}
        s1 = {"t": 5.0, "qemu": 0, "io": 0, "sched": 0, "steal": 100 + tck}
        self.assertEqual(run.window_metrics(s0, s1)["host_steal_ms"], 1000.0)
        del s0["steal"]
        self.assertNotIn("host_steal_ms", run.window_metrics(s0, s1))
        # the runner's own snapshot reads it too, where /proc/stat has it
        with open("/proc/stat") as f:
            have = run.steal_ticks(f.read().splitlines()) is not None
        snap = run.snapshot(os.getpid(), threading.get_native_id())
        self.assertEqual("steal" in snap, have)

    def test_variant_spec(self):
        v = run.Variant("w2=/b/series:poll-weight=2,poll-max-ns=16384")
        self.assertEqual((v.label, v.bindir, v.weight), ("w2", "/b/series", 2))
        self.assertEqual(v.iothread(), "iothread,id=io1,poll-weight=2,poll-max-ns=16384")
        self.assertEqual(run.Variant("unpatched=/b").iothread(), "iothread,id=io1")


    def test_others_ticks_sees_a_busy_stranger(self):
        # A process outside the runner's tree: its CPU counts.  Start it
        # with setsid through a double fork so it is not our descendant.
        busy = subprocess.Popen(["sh", "-c", "(timeout 0.6 sh -c 'while :; do :; done' &) ; sleep 0.7"])
        time.sleep(0.05)
        o0 = run.others_ticks()
        busy.wait()
        o1 = run.others_ticks()
        self.assertGreaterEqual((o1 - o0) * 1000.0 / run.CLK_TCK, 300)


class SchedWakeupsTest(unittest.TestCase):
    """--sched-wakeups, on a stand-in for tracefs: the filter names the
    IOThreads, the events are kept with the CPUs' lost events in a header
    line, and everything is set back; off, it touches nothing"""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.fs = os.path.join(self.dir.name, "tracing")
        ev = os.path.join(self.fs, "events/sched/sched_waking")
        os.makedirs(ev)
        for k in (0, 1):
            os.makedirs(os.path.join(self.fs, "per_cpu/cpu%d" % k))
            with open(os.path.join(self.fs, "per_cpu/cpu%d/stats" % k),
                      "w") as f:
                f.write("entries: 3\noverrun: %d\n" % (2 * k))
        self.old, run.TRACEFS = run.TRACEFS, self.fs

    def tearDown(self):
        run.TRACEFS = self.old
        self.dir.cleanup()

    def read(self, name):
        with open(os.path.join(self.fs, name)) as f:
            return f.read()

    def test_start_stop(self):
        class A:
            sched_wakeups = True
        w = run.SchedWakeups(A(), self.dir.name)
        w.start([41, 42])
        self.assertEqual(self.read("events/sched/sched_waking/filter"),
                         "pid == 41 || pid == 42")
        self.assertEqual(self.read("trace_clock"), "mono")
        self.assertEqual(self.read("events/sched/sched_waking/enable"), "1")
        with open(os.path.join(self.fs, "trace"), "w") as f:
            f.write("# tracer: nop\n"
                    "  IO io1-41 [001] d..2. 7.000011: sched_waking: "
                    "comm=IO io1 pid=41 prio=120 target_cpu=001\n")
        w.stop()
        with open(os.path.join(self.dir.name, "sched-wakeups.txt")) as f:
            lines = f.read().splitlines()
        self.assertEqual(lines[0], "# apw sched-wakeups: clock mono, "
                         "overrun 2")
        self.assertEqual(len(lines), 2)
        self.assertIn("7.000011: sched_waking", lines[1])
        self.assertEqual(self.read("events/sched/sched_waking/enable"), "0")
        self.assertEqual(self.read("events/sched/sched_waking/filter"), "0")
        self.assertEqual(self.read("tracing_on"), "0")
        w.stop()    # a second stop does nothing

    def test_no_tracefs(self):
        class A:
            sched_wakeups = True
        run.TRACEFS = os.path.join(self.dir.name, "none")
        w = run.SchedWakeups(A(), self.dir.name)
        with self.assertRaisesRegex(RuntimeError, "cannot trace "
                                    "sched_waking through .*none"):
            w.start([41])
        w.stop()    # not started: nothing to stop

    def test_off(self):
        class A:
            sched_wakeups = False
        w = run.SchedWakeups(A(), self.dir.name)
        w.start([41])
        w.stop()
        self.assertFalse(os.path.exists(os.path.join(self.fs, "trace_clock")))
        self.assertFalse(os.path.exists(os.path.join(self.dir.name,
                                                     "sched-wakeups.txt")))


class Guest(unittest.TestCase):
    def test_module_order(self):
        def ko(dep):
            return b"\0license=GPL\0depends=" + dep + b"\0name=x\0"
        mods = {}
        with tempfile.TemporaryDirectory() as d:
            for name, dep in (("virtio_blk", b"virtio,virtio_ring"),
                              ("virtio", b"virtio_ring"), ("virtio_ring", b"")):
                p = os.path.join(d, name + ".ko")
                with open(p, "wb") as f:
                    f.write(ko(dep))
                mods[name] = p
            self.assertEqual(guest.module_order(mods, ["virtio_blk"]),
                             ["virtio_ring", "virtio", "virtio_blk"])

    @unittest.skipUnless(os.path.exists("/usr/bin/cpio"), "no cpio to check with")
    def test_newc_archive_reads_back(self):
        with tempfile.TemporaryDirectory() as d:
            root = os.path.join(d, "root")
            os.makedirs(os.path.join(root, "bin"))
            with open(os.path.join(root, "bin/x"), "w") as f:
                f.write("hello")
            os.chmod(os.path.join(root, "bin/x"), 0o755)
            os.symlink("x", os.path.join(root, "bin/y"))
            guest.write_newc(root, os.path.join(d, "a.cpio"))
            out = os.path.join(d, "out")
            os.makedirs(out)
            with open(os.path.join(d, "a.cpio"), "rb") as f:
                subprocess.run(["cpio", "-idm", "--quiet"], stdin=f, cwd=out,
                               check=True)
            with open(os.path.join(out, "bin/x")) as f:
                self.assertEqual(f.read(), "hello")
            self.assertTrue(os.stat(os.path.join(out, "bin/x")).st_mode & stat.S_IXUSR)
            self.assertEqual(os.readlink(os.path.join(out, "bin/y")), "x")


class Report(unittest.TestCase):
    def test_table_ratios_and_hangs(self):
        rows = []
        for rnd in (0, 1, 2, 3):
            for label, props, iops, cpu in (("unpatched", "", 1000, 50),
                                            ("w2", "poll-weight=2", 1100, 40),
                                            ("floor", "poll-max-ns=0", 900, 30)):
                rows.append({"venue": "nbd", "workload": "sat", "variant": label,
                             "round": str(rnd), "status": "ok", "hang": "0",
                             "props": props, "rate_iops": "",
                             "iops": str(iops + rnd), "lat_mean_us": "100",
                             "lat_p50_us": "90", "lat_p99_us": "300",
                             "iothread_cpu_ms_per_kio": str(cpu),
                             "qemu_cpu_ms_per_kio": str(cpu + 1)})
        rows.append(dict(rows[-1], round="2", status="hang", hang="1", iops=""))
        cells, order = report.group(rows)
        t = report.table(cells[("nbd", "sat")], order)
        w2 = next(l for l in t.splitlines() if l.startswith("| w2 "))
        self.assertIn("1102 (1101-1103)", w2)
        self.assertIn("1.10x", w2)        # IOPS vs unpatched
        self.assertIn("0.80x", w2)        # IOThread CPU vs unpatched
        floor = next(l for l in t.splitlines() if l.startswith("| floor "))
        self.assertTrue(floor.rstrip(" |").endswith("1"))   # one hang
        self.assertEqual(len(cells[("nbd", "sat")]["w2"].rows), 3)  # no warm-up

    def test_pooled_rounds(self):
        """Runs pooled: their measured rounds numbered on, so that a ratio
        still pairs the variants of one round of one run, in report.py,
        bases.py and policy.py alike"""
        fields = ["venue", "workload", "variant", "round", "status",
                  "iothread_cpu_ms_per_kio"]
        with tempfile.TemporaryDirectory() as d:
            runs = []
            for k, cpu in ((0, 20), (1, 40)):   # unpatched 2x, then 4x
                runs.append(os.path.join(d, "run%d" % k))
                os.mkdir(runs[-1])
                with open(os.path.join(runs[-1], "samples.csv"), "w",
                          newline="") as f:
                    w = csv.DictWriter(f, fieldnames=fields)
                    w.writeheader()
                    for rnd in (0, 1, 2):
                        for label, v in (("unpatched", cpu), ("floor", 10)):
                            w.writerow({"venue": "g", "workload": "sat",
                                        "variant": label, "round": rnd,
                                        "status": "ok",
                                        "iothread_cpu_ms_per_kio": v})
            rows = stats.pooled(runs)
            brows = bases.load(runs)
            prows = policy.read(runs)[0]
        self.assertEqual(sorted(int(r["round"]) for r in rows
                                if r["variant"] == "floor"),
                         [0, 0, 1, 2, 3, 4])
        cells, _ = report.group(rows)
        iv = report.ratio_iv(cells[("g", "sat")], "unpatched",
                             "iothread_cpu_ms_per_kio", "floor")
        self.assertEqual(iv[3], 4)                       # all four rounds
        self.assertAlmostEqual(iv[0], math.sqrt(8))      # 2, 2, 4, 4
        # bases.py: the median ratio, and the per-round ones 2x and 4x
        self.assertEqual(bases.ratio(brows, ("g", "sat", "unpatched"),
                                     ("g", "sat", "floor"),
                                     "iothread_cpu_ms_per_kio"),
                         (3.0, 2.0, 4.0))
        by_var = prows[("g", "sat")]
        self.assertEqual(stats.paired(by_var["unpatched"], by_var["floor"],
                                      "iothread_cpu_ms_per_kio"),
                         [2.0, 2.0, 4.0, 4.0])

    def test_sig(self):
        self.assertEqual(report.fnum(0.0456, "sig"), "0.0456")
        self.assertEqual(report.fnum(123.4, "sig"), "123")
        self.assertEqual(report.fnum(None, "sig"), "-")


class Bases(unittest.TestCase):
    def test_side_by_side(self):
        """CPU per I/O from schedstat (stats.IO_CPU), not the clock ticks"""
        fields = ["venue", "workload", "variant", "round", "status", "iops",
                  "lat_mean_us", "iothread_cpu_ms_per_kio",
                  "iothread_sched_ms_per_kio"]
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "samples.csv"), "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=fields)
                w.writeheader()
                for rnd in (0, 1, 2, 3):
                    for v, cpu in (("unpatched", 60), ("w3", 50), ("floor", 50),
                                   ("unpatched-10.0.13", 80),
                                   ("w3-10.0.13", 44 + rnd),
                                   ("floor-10.0.13", 40)):
                        w.writerow({"venue": "guest", "workload": "sat",
                                    "variant": v, "round": rnd,
                                    "status": "error" if rnd == 3 and v == "w3" else "ok",
                                    "iops": 1000, "lat_mean_us": 100,
                                    "iothread_cpu_ms_per_kio": 7 + rnd,
                                    "iothread_sched_ms_per_kio":
                                    999 if rnd == 0 else cpu})
            out = subprocess.run([sys.executable, bases.__file__, d,
                                  "--bases", "10.2.2,10.0.13"],
                                 capture_output=True, text=True, check=True).stdout
        lines = out.splitlines()
        self.assertEqual(lines[0], "| venue, workload | ratio | 10.2.2 | 10.0.13 |")
        unp = next(l for l in lines if "unpatched vs no polling" in l)
        self.assertIn("| 1.20x (1.20-1.20) | 2.00x (2.00-2.00) |", unp)
        ser = next(l for l in lines if "series (w3) vs no polling" in l)
        # 10.0.13: rounds 1-3 give 45, 46, 47 against 40 (warm-up ignored)
        self.assertIn("| 1.00x (1.00-1.00) | 1.15x (1.12-1.18) |", ser)
        self.assertFalse(any("latency" in l for l in lines))  # no rate job


class UpstreamPolicyTest(unittest.TestCase):
    def test_interval(self):
        g, lo, hi, n = policy.interval([2.0, 2.0, 2.0])
        self.assertAlmostEqual(g, 2.0)
        self.assertAlmostEqual(lo, 2.0)
        self.assertEqual(n, 3)
        g, lo, hi, n = policy.interval([1.0, 1.21])
        self.assertAlmostEqual(g, 1.1)
        self.assertLess(lo, 1.0)   # 2 rounds: a wide interval
        self.assertGreater(hi, 1.21)

    def test_floors(self):
        labels = ["w1", "series-floor", "up1", "upstream", "upstream-floor",
                  "unpatched", "floor"]
        self.assertEqual(policy.floor_of("w1", labels), "series-floor")
        self.assertEqual(policy.floor_of("w1", ["w1", "floor"]), "floor")
        self.assertEqual(policy.floor_of("up1", labels), "upstream-floor")
        self.assertEqual(policy.floor_of("upstream", labels), "upstream-floor")
        self.assertEqual(policy.floor_of("unpatched", labels), "floor")
        self.assertIsNone(policy.floor_of("upstream-floor", labels))

    def test_report(self):
        """CPU per I/O is schedstat's (stats.IO_CPU), the key of report.py's
        verdicts, not the clock ticks; a run that other processes disturbed
        is left out as report.py leaves it out"""
        fields = ["venue", "workload", "variant", "round", "status", "iops",
                  "iothread_cpu_ms_per_kio", "iothread_sched_ms_per_kio",
                  "iothread_vcsw_per_kio", "other_cpu_ms", "other_window_s"]
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "samples.csv"), "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=fields)
                w.writeheader()
                for rnd in (0, 1, 2, 3, 4):
                    for v, cpu, cs in (("w3", 60, 300), ("series-floor", 50, 600),
                                       ("upstream", 66, 300),
                                       ("upstream-floor", 50, 600)):
                        # round 4 of w3: another process took 75% of a core
                        bad = rnd == 4 and v == "w3"
                        w.writerow({"venue": "guest", "workload": "sat",
                                    "variant": v, "round": rnd, "status": "ok",
                                    "iops": 1000,
                                    "iothread_cpu_ms_per_kio": 100,
                                    "iothread_sched_ms_per_kio":
                                    999 if rnd == 0 or bad else cpu,
                                    "iothread_vcsw_per_kio": cs,
                                    "other_cpu_ms": 3000 if bad else 10,
                                    "other_window_s": 4})
            rows, left_out = policy.read([d])
            kept, left_out_all = policy.read([d], None)
            text = policy.report(rows)
        w3, w3_all = rows[("guest", "sat")]["w3"], kept[("guest", "sat")]["w3"]
        self.assertEqual(len(w3), 3)
        self.assertEqual(len(w3_all), 4)
        # the disturbed run is counted, once, and only when left out; the
        # rows read are the same either way but for it (round 4)
        self.assertEqual(left_out, 1)
        self.assertEqual(dict(w3), {r: w3_all[r] for r in w3_all if r != 4})
        self.assertEqual(left_out_all, 0)
        self.assertIn("1 measured runs left out", policy.report(rows, 1))
        self.assertNotIn("left out", text)
        lines = text.splitlines()
        w3 = next(l for l in lines if l.startswith("| w3 |"))
        self.assertIn("| 1.200 [1.200, 1.200] | 0.500 [0.500, 0.500] |", w3)
        pair = next(l for l in lines if l.startswith("| w3 / upstream |"))
        # (60/50) / (66/50) = 0.909: the series costs less over its floor
        self.assertIn("| 0.909 [0.909, 0.909] | 1.000 [1.000, 1.000] |", pair)


class Stats(unittest.TestCase):
    def test_interval_known_values(self):
        # logs 0, 0.1, 0.2: mean 0.1, sd 0.1, t(2) = 4.303
        g, lo, hi, n = stats.interval([1.0, math.exp(0.1), math.exp(0.2)])
        h = 4.303 * 0.1 / math.sqrt(3)
        self.assertAlmostEqual(g, math.exp(0.1))
        self.assertAlmostEqual(lo, math.exp(0.1 - h))
        self.assertAlmostEqual(hi, math.exp(0.1 + h))
        self.assertEqual(n, 3)
        self.assertEqual(stats.interval([1.5])[1:], (None, None, 1))
        self.assertIsNone(stats.interval([]))

    def test_t95_never_narrower(self):
        self.assertEqual(stats.t95(20), 2.086)
        self.assertEqual(stats.t95(21), 2.086)   # the table's 20, not 22's
        self.assertEqual(stats.t95(500), 1.980)
        for df in range(1, 130):
            self.assertGreaterEqual(stats.t95(df), stats.t95(df + 1))

    def test_verdict_words(self):
        iv = lambda lo, hi: (1.0, lo, hi, 5)
        # upper bound 1.05 (CPU within 1.05x of the floor)
        self.assertEqual(stats.verdict(iv(0.97, 1.04), hi=1.05), "met")
        self.assertEqual(stats.verdict(iv(1.06, 1.20), hi=1.05), "missed")
        self.assertEqual(stats.verdict(iv(1.00, 1.10), hi=1.05), "not resolved")
        # lower bound 0.95 (IOPS no worse than unpatched)
        self.assertEqual(stats.verdict(iv(0.96, 1.30), lo=0.95), "met")
        self.assertEqual(stats.verdict(iv(0.80, 0.94), lo=0.95), "missed")
        self.assertEqual(stats.verdict(iv(0.90, 1.00), lo=0.95), "not resolved")
        # a band, and one round only
        self.assertEqual(stats.verdict(iv(0.96, 1.04), 0.95, 1.05), "met")
        self.assertEqual(stats.verdict(iv(0.90, 1.10), 0.95, 1.05), "not resolved")
        self.assertEqual(stats.verdict((1.0, None, None, 1), hi=2), "not resolved")
        self.assertEqual(stats.verdict(None, hi=2), "not resolved")

    def test_rounds_for(self):
        # sd of the logs 0.1: t(n-1) * 0.1 / sqrt(n) <= log(1.05) at n = 19
        rs = [math.exp(x) for x in (-0.1, 0.1) * 4]
        sd = __import__("statistics").stdev([math.log(r) for r in rs])
        n = stats.rounds_for(rs)
        self.assertLessEqual(stats.t95(n - 1) * sd / math.sqrt(n), math.log(1.05))
        self.assertGreater(stats.t95(n - 2) * sd / math.sqrt(n - 1), math.log(1.05))
        self.assertAlmostEqual(stats.half_width((1, 1 / 1.05, 1.05, 9)), 0.05)

    def test_paired_within_rounds(self):
        a = {1: {"x": "2"}, 2: {"x": "3"}, 3: {"x": "1"}}
        b = {1: {"x": "1"}, 2: {"x": "3"}, 4: {"x": "9"}}
        self.assertEqual(stats.paired(a, b, "x"), [2.0, 1.0])
        fa = {1: {"x": "1"}, 2: {"x": "1.5"}}
        self.assertEqual(stats.paired_of_ratios(a, fa, b, b, "x"), [2.0, 2.0])


class MultiDisk(unittest.TestCase):
    def args(self, **kw):
        a = run.argparse.Namespace(
            workloads="sat,rate", full_matrix=False, runtime=4,
            rate_iops_guest=1340, rate_iops_nbd=2000, fio_args="",
            disk="/d/one.img", disks=["/d/m%d.img" % i for i in range(8)],
            aio="native", cache="direct", iter_trace=False, pin="none",
            trace_events="")
        for k, v in kw.items():
            setattr(a, k, v)
        return a

    def boot(self, venue, a=None):
        v = run.Variant("w3=/b/series:poll-weight=3")
        return run.GuestBoot(a or self.args(), v, [], "/nonexistent", "/tmp", venue)

    def test_one_iothread_eight_disks(self):
        args = self.boot("guest8").disk_args()
        objs = [args[i + 1] for i, x in enumerate(args) if x == "-object"]
        devs = [args[i + 1] for i, x in enumerate(args) if x == "-device"]
        bds = [args[i + 1] for i, x in enumerate(args) if x == "-blockdev"]
        self.assertEqual(objs, ["iothread,id=io1,poll-weight=3"])
        self.assertEqual(len(bds), 8)
        for i, bd in enumerate(bds):
            self.assertIn("node-name=d%d,filename=/d/m%d.img,aio=native,"
                          "cache.direct=on" % (i, i), bd)
        self.assertEqual(devs, ["virtio-blk-pci,drive=d%d,iothread=io1" % i
                                for i in range(8)])

    def test_two_iothreads_split(self):
        b = self.boot("guest8x2")
        args = b.disk_args()
        objs = [args[i + 1] for i, x in enumerate(args) if x == "-object"]
        devs = [args[i + 1] for i, x in enumerate(args) if x == "-device"]
        # both IOThreads get the variant's properties
        self.assertEqual(objs, ["iothread,id=io1,poll-weight=3",
                                "iothread,id=io2,poll-weight=3"])
        self.assertEqual([d.rsplit("=", 1)[1] for d in devs],
                         ["io1", "io2"] * 4)
        self.assertEqual(b.iothread_names(), ["io1", "io2"])

    def test_single_disk_guest_unchanged(self):
        args = self.boot("guest").disk_args()
        self.assertEqual(args, [
            "-object", "iothread,id=io1,poll-weight=3",
            "-blockdev", "driver=file,node-name=d0,filename=/d/one.img,"
                         "aio=native,cache.direct=on",
            "-device", "virtio-blk-pci,drive=d0,iothread=io1"])

    def test_page_cache_disks(self):
        # --cache page: every data disk through the host's page cache
        a = self.args(aio="threads", cache="page")
        bds = [x for x in self.boot("guest8", a).disk_args()
               if x.startswith("driver=file")]
        self.assertEqual(len(bds), 8)
        for bd in bds:
            self.assertTrue(bd.endswith(",aio=threads,cache.direct=off"), bd)

    def test_read_in(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "f")
            with open(p, "wb") as f:
                f.write(b"x" * (3 << 20))
            self.assertEqual(run.read_in([p, p]), 6)

    def test_multi_disk_jobs_spread_over_all_disks(self):
        jobs = run.venue_jobs(self.args(), "guest8x2")
        self.assertEqual([j["name"] for j in jobs],
                         ["randread-8k-qd8-j4", "randread-8k-qd1-j4-rate"])
        for j in jobs:
            # init.sh gives /dev/vda; fio adds these to it
            self.assertIn("--filename=/dev/vdb:/dev/vdc:/dev/vdd:/dev/vde:"
                          "/dev/vdf:/dev/vdg:/dev/vdh", j["args"])
            self.assertEqual(run.numjobs_of(j["args"]), 4)
        # the rate is the total: a quarter per fio job
        self.assertIn("--rate_iops=335", jobs[1]["args"])
        self.assertEqual(jobs[1]["rate"], 1340)
        one = run.venue_jobs(self.args(), "guest")
        self.assertEqual([j["name"] for j in one],
                         ["randread-8k-qd8", "randread-8k-qd1-rate"])
        self.assertFalse(any(x.startswith("--filename") for x in one[0]["args"]))
        self.assertIn("--rate_iops=1340", one[1]["args"])

    def test_mix(self):
        jobs = run.venue_jobs(self.args(workloads="mix"), "guest8")
        self.assertEqual(len(jobs), 8)
        self.assertEqual({run.numjobs_of(j["args"]) for j in jobs}, {1, 4})
        self.assertEqual({x for j in jobs for x in j["args"] if x.startswith("--rw=")},
                         {"--rw=randread", "--rw=randwrite", "--rw=read", "--rw=write"})

    def test_iter_trace_in_multi_disk_guest(self):
        with tempfile.TemporaryDirectory() as d:
            a = self.args(iter_trace=True, bios_dir="/bios", kernel="/k",
                          initrd="/i")
            v = run.Variant("w3=/b/series:poll-weight=3")
            cmd = run.GuestBoot(a, v, [{"name": "j", "args": ["--rw=read"]}],
                                d, "/tmp", "guest8x2").cmdline()
            i = cmd.index("-trace")
            self.assertEqual(cmd[i + 1], "enable=aio_poll_*,file=" +
                             os.path.join(d, "iter-trace.log"))
            self.assertEqual(cmd.count("-device"), 8)
            with open(os.path.join(d, "jobs.txt")) as f:
                self.assertEqual(f.read(), "j --rw=read --ioengine=libaio\n")

    def test_trace_events(self):
        def cmdline(d, **kw):
            a = self.args(bios_dir="/bios", kernel="/k", initrd="/i", **kw)
            return run.GuestBoot(a, run.Variant("w3=/b/series:poll-weight=3"),
                                 [{"name": "j", "args": ["--rw=read"]}],
                                 d, "/tmp", "guest8").cmdline()

        with tempfile.TemporaryDirectory() as d:
            cmd = cmdline(d, trace_events="poll_wakeup_price")
            self.assertEqual(cmd[cmd.index("-trace") + 1],
                             "enable=poll_wakeup_price,file=" +
                             os.path.join(d, "trace.log"))
            self.assertEqual(cmd.count("-trace"), 1)
            self.assertNotIn("-trace", cmdline(d))

    def test_too_few_disks(self):
        with self.assertRaises(SystemExit):
            self.boot("guest8", self.args(disks=["/d/a"])).disk_args()

    def test_schedule(self):
        s = run.schedule(["guest", "guest8"], ["a", "b", "c"], 1, 2)
        self.assertEqual([(r, ve, v) for r, ve, v in s if ve == "guest"],
                         [(0, "guest", "a"), (1, "guest", "a"), (1, "guest", "b"),
                          (1, "guest", "c"), (2, "guest", "b"), (2, "guest", "c"),
                          (2, "guest", "a")])
        self.assertEqual(s[7][1], "guest8")         # venue by venue
        m = run.schedule(["guest", "guest8"], ["a", "b", "c"], 1, 2, True)
        self.assertEqual(sorted(m), sorted(s))      # the same boots
        self.assertEqual([x[1] for x in m[:8]],
                         ["guest", "guest8"] + ["guest"] * 3 + ["guest8"] * 3)

    def test_pin_plan(self):
        self.assertEqual(run.pin_plan([10], [20, 21], {0, 1}),
                         {10: 0, 20: 1, 21: 1})
        self.assertEqual(run.pin_plan([10], [20], {0}), {})
        self.assertEqual(run.pin_plan([10], [20, 21], {0, 1}, swap=True),
                         {10: 1, 20: 0, 21: 0})
        self.assertEqual(run.pin_plan([10, 11], [20], {3, 1, 2}, True),
                         {10: 3, 11: 3, 20: 1})

    def test_thread_groups(self):
        self.assertEqual(run.thread_group(9, 9, "qemu-system-x86"), "main")
        self.assertEqual(run.thread_group(9, 10, "CPU 0/TCG"), "vcpu")
        self.assertEqual(run.thread_group(9, 11, "IO io1"), "io")
        self.assertEqual(run.thread_group(9, 12, "worker"), "worker")
        self.assertEqual(run.thread_group(9, 13, "call_rcu"), "other")
        t0 = {9: ("main", 100, 1, 0), 10: ("vcpu", 50, 5, 2),
              12: ("worker", 7, 2, 0), 13: ("worker", 3, 1, 0)}
        # 13 ended, 14 started (from 0), 12 went on; a tid reused by
        # another group counts from 0 too
        t1 = {9: ("main", 130, 1, 0), 10: ("vcpu", 250, 45, 9),
              12: ("worker", 17, 4, 1), 14: ("worker", 5, 3, 0),
              15: ("other", 2, 0, 0)}
        self.assertEqual(run.group_times(t0, t1),
                         {"main": 30, "vcpu": 200, "worker": 15, "other": 2})
        self.assertEqual(run.group_times(t0, t1, 2),
                         {"main": 0, "vcpu": 40, "worker": 5, "other": 0})
        self.assertEqual(run.group_times(t0, t1, 3)["vcpu"], 7)
        self.assertEqual(run.group_times(t0, {12: ("vcpu", 20, 3, 1)}),
                         {"vcpu": 20})
        s0 = {"t": 1.0, "qemu": 0, "io": 0, "sched": 0, "tasks": t0}
        s1 = {"t": 5.0, "qemu": 0, "io": 0, "sched": 0,
              "tasks": {9: ("main", 100 + 10 ** 9, 1, 0),
                        10: ("vcpu", 50 + 2 * 10 ** 9, 4005, 102)}}
        row = run.finish_row(dict(run.window_metrics(s0, s1), ios=2000))
        self.assertEqual((row["main_cpu_ms"], row["vcpu_cpu_ms"],
                          row["worker_cpu_ms"]), (1000.0, 2000.0, 0.0))
        self.assertEqual(row["vcpu_cpu_ms_per_kio"], 1000.0)
        self.assertEqual((row["vcpu_writes"], row["vcpu_writes_per_kio"],
                          row["worker_writes_per_kio"]), (4000, 2000.0, 0.0))
        self.assertEqual((row["vcpu_nvcsw"], row["vcpu_nvcsw_per_kio"]),
                         (100, 50.0))
        self.assertEqual(run.syscw("rchar: 5\nsyscr: 2\nsyscw: 17\n"), 17)
        with self.assertRaises(ValueError):
            run.syscw("rchar: 5\n")
        # the runner's own threads, by the same reading
        tasks = run.snapshot(os.getpid(), os.getpid())["tasks"]
        self.assertEqual(tasks[os.getpid()][0], "main")
        self.assertGreater(tasks[os.getpid()][1], 0)

    def test_snapshot_sums_iothreads(self):
        pid = os.getpid()
        one = run.snapshot(pid, pid)
        two = run.snapshot(pid, [pid, pid])
        self.assertGreaterEqual(two["sched"], 2 * one["sched"])
        self.assertGreaterEqual(two["vcsw"], 2 * one["vcsw"])
        self.assertEqual(two["qemu"] >= one["qemu"], True)


class PairedReport(unittest.TestCase):
    def rows(self):
        rows = []
        for rnd in range(0, 6):
            drift = 1.0 + 0.3 * (rnd % 2)   # the host drifts by round
            for label, cpu, iops in (("unpatched", 120, 1000),
                                     ("floor", 100, 1000),
                                     ("w3", 102 + rnd % 2, 1010),
                                     ("series-floor", 100, 1000)):
                rows.append({"venue": "guest8x2", "workload": "randread-8k-qd8-j4",
                             "variant": label, "round": str(rnd), "status": "ok",
                             "hang": "0", "props": "", "rate_iops": "",
                             "iops": str(iops / drift), "lat_mean_us": "100",
                             "lat_p99_us": "300", "other_cpu_ms": "10",
                             "other_window_s": "4",
                             "iothread_vcsw_per_kio": "500",
                             "iothread_sched_ms_per_kio": str(cpu * drift),
                             "iothread_cpu_ms_per_kio": "1",
                             "qemu_cpu_ms_per_kio": "400"})
        return rows

    def test_disturbed_runs_left_out(self):
        rows = self.rows()
        # round 2 of w3: another process took 75% of a core
        bad = next(r for r in rows if r["variant"] == "w3" and r["round"] == "2")
        bad["other_cpu_ms"] = "3000"
        cells, _ = report.group(rows, stats.OTHER_MAX_PCT)
        cs = cells[("guest8x2", "randread-8k-qd8-j4")]
        self.assertEqual((len(cs["w3"].rows), cs["w3"].disturbed), (4, 1))
        self.assertEqual(report.ratio_iv(cs, "w3", stats.IO_CPU, "floor")[3], 4)
        cells, _ = report.group(rows)
        self.assertEqual(len(cells[("guest8x2", "randread-8k-qd8-j4")]["w3"].rows), 5)
        # bases.py and policy.py leave out the same run (stats.measured())
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "samples.csv"), "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=list(rows[0]))
                w.writeheader()
                w.writerows(rows)
            key = ("guest8x2", "randread-8k-qd8-j4")
            self.assertEqual(sorted(bases.load([d])[key + ("w3",)]),
                             [1, 3, 4, 5])
            self.assertEqual(sorted(policy.read([d])[0][key]["w3"]),
                             [1, 3, 4, 5])
            self.assertEqual(len(bases.load([d], None)[key + ("w3",)]), 5)

    def test_host_lines(self):
        """The report says how much CPU time other processes and the
        hypervisor (steal) took during the windows"""
        rows = self.rows()
        lines = report.host_lines(rows, 0, False)
        self.assertEqual(len(lines), 1)     # no steal recorded: no line
        self.assertIn("median 0%, max 0% of one core", lines[0])
        for k, r in enumerate(rows):
            r["window_s"] = "4"
            r["host_steal_ms"] = "3000" if k == 0 else "1000"
        rows[1]["other_cpu_ms"] = "3000"
        lines = report.host_lines(rows, 1, False)
        self.assertIn("**1 of %d measured runs left out**" % len(rows),
                      lines[1])
        self.assertIn("hypervisor", lines[2])
        self.assertIn("median 25%, max 75% of one core", lines[2])
        self.assertNotIn("recorded in", lines[2])
        del rows[0]["host_steal_ms"]    # a run that did not record it
        lines = report.host_lines(rows, 1, False)
        self.assertIn("median 25%%, max 25%% of one core (recorded in %d of "
                      "the %d measured runs)" % (len(rows) - 1, len(rows)),
                      lines[2])

    def test_paired_ratios_and_verdicts(self):
        cells, order = report.group(self.rows())
        cs = cells[("guest8x2", "randread-8k-qd8-j4")]
        # paired within rounds, the drift cancels: unpatched is 1.2x
        iv = report.ratio_iv(cs, "unpatched", "iothread_sched_ms_per_kio", "floor")
        self.assertAlmostEqual(iv[0], 1.2)
        self.assertAlmostEqual(iv[1], 1.2)
        # w3 against its own build's floor
        self.assertEqual(report.reference("w3", "floor", list(cs)), "series-floor")
        text = report.summary_verdicts(list(cells.items()), order)
        line = next(l for l in text.splitlines() if l.startswith("| guest8x2"))
        cols = [c.strip() for c in line.strip("|").split("|")]
        self.assertEqual(cols[1], "1.20 [1.20, 1.20] **missed**")   # unpatched
        self.assertTrue(cols[2].endswith("**met**"), cols[2])         # w3: 1.02-1.03
        t = report.paired_tables(cs, order, "randread-8k-qd8-j4")
        self.assertIn("| floor |", t)
        self.assertIn("1.01 [1.01, 1.01] **met**", t)    # w3's IOPS vs unpatched
        sp = report.spread_table(list(cells.items()), order)
        self.assertIn("| guest8x2, randread-8k-qd8-j4 | w3 / series-floor | IOThread CPU/I/O | 5 |", sp)
        # CPU against unpatched: w3 1.02-1.03x its floor, which is 1/1.2
        # of unpatched's
        i = text.index("### IOThread CPU per I/O vs unpatched (target: <= 1.00)")
        line = next(l for l in text[i:].splitlines()
                    if l.startswith("| guest8x2"))
        cols = [c.strip() for c in line.strip("|").split("|")]
        self.assertEqual(cols[2], "0.85 [0.85, 0.86] **met**")



class CompareRuns(unittest.TestCase):
    def test_welch(self):
        # the same samples: ratio 1, an interval around it
        r, lo, hi = compare_runs.welch([1.1, 1.2, 1.3], [1.1, 1.2, 1.3])
        self.assertAlmostEqual(r, 1.0)
        self.assertLess(lo, 1.0)
        self.assertGreater(hi, 1.0)
        # logs 0 and 1 against 0 and 0: mean 0.5, se 0.5, df 1
        r, lo, hi = compare_runs.welch([1, math.e], [1, 1])
        self.assertAlmostEqual(math.log(r), 0.5)
        self.assertAlmostEqual(math.log(hi), 0.5 + 12.706 * 0.5)
        self.assertAlmostEqual(math.log(lo), 0.5 - 12.706 * 0.5)
        # twice as large, no spread
        self.assertEqual(compare_runs.welch([2, 2], [1, 1]), (2.0, 2.0, 2.0))
        self.assertIsNone(compare_runs.welch([2], [1, 1]))

    def test_rows_pair_each_variant_with_its_own_floor(self):
        def cells(w3, floor, up, upf):
            return {("g", "rate", v): {"1": {"m": str(x)}}
                    for v, x in (("w3", w3), ("series-floor", floor),
                                 ("upstream", up), ("upstream-floor", upf))}
        out = compare_runs.rows(cells(2, 4, 3, 1), cells(1, 1, 1, 2), "m")
        self.assertEqual(out, [("g", "rate", "upstream", [3.0], [0.5]),
                               ("g", "rate", "w3", [0.5], [1.0])])

    def test_compare_leaves_out_the_warmup_and_failed_runs(self):
        with tempfile.TemporaryDirectory() as d:
            for name, rounds in (("a", ((0, "ok", 100), (1, "ok", 2),
                                        (2, "error", 50))),
                                 ("b", ((1, "ok", 4),))):
                os.mkdir(os.path.join(d, name))
                with open(os.path.join(d, name, "samples.csv"), "w") as f:
                    f.write("venue,workload,variant,round,status,m\n")
                    for rnd, status, x in rounds:
                        f.write("g,rate,w3,%d,%s,%d\n" % (rnd, status, x))
                        f.write("g,rate,series-floor,%d,%s,1\n" % (rnd,
                                                                   status))
            out = compare_runs.compare(os.path.join(d, "a"),
                                       os.path.join(d, "b"), "m")
        self.assertEqual(out, [("g", "rate", "w3", [2.0], [4.0])])


class Hangs(unittest.TestCase):
    """hangs.py: starts counted once whatever their rows, a hung attempt
    and its retry two starts, the builds told by their binary, and the
    exact interval and test"""

    def test_build_of(self):
        self.assertEqual(hangs.build_of(
            "/root/.cache/aio-poll-weight/upstream-11.1.3/bin"),
            "upstream 11.1.3")
        self.assertEqual(hangs.build_of("/w/work/10.2.2/base/build-all"),
                         "unpatched 10.2.2")
        self.assertEqual(hangs.build_of(
            "/w/work/10.2.2/traced-unpatched/build-all"), "unpatched 10.2.2")
        self.assertEqual(hangs.build_of("/w/work/10.2.2/series/build-all"),
                         "series (10.2.2)")
        self.assertEqual(hangs.build_of("/w/work/10.2.2/traced-new/b"),
                         "series (10.2.2)")
        self.assertEqual(hangs.build_of("/w/work/10.2.2/p15/build-all"),
                         "series (10.2.2)")
        self.assertEqual(hangs.build_of("/w/work/10.0.13/series/build-all"),
                         "10.0.13 (series)")
        self.assertEqual(hangs.build_of("/w/work/10.0.13/p15/build-all"),
                         "10.0.13 (series)")
        self.assertEqual(hangs.build_of("/w/work/10.0.13/base/build-all"),
                         "10.0.13 (unpatched)")

    def test_starts(self):
        s = "/w/work/10.2.2/series/build-all"
        u = "/w/work/10.2.2/base/build-all"
        rows = [  # round 1: w3 hangs in its first job and is run again
            ("w3", 1, 1, "hang", 1, "sat", s),
            ("w3", 1, 2, "ok", 0, "sat", s),
            ("w3", 1, 2, "ok", 0, "rate", s),
            ("unpatched", 1, 1, "ok", 0, "sat", u),
            ("unpatched", 1, 1, "ok", 0, "rate", u),
            ("unpatched", 2, 1, "ok", 0, "sat", u)]
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "samples.csv"), "w") as f:
                f.write("venue,workload,variant,round,attempt,status,hang,"
                        "binary\n")
                for v, rnd, att, st, h, w, b in rows:
                    f.write("guest,%s,%s,%d,%d,%s,%d,%s\n"
                            % (w, v, rnd, att, st, h, b))
            out = hangs.starts([d])
        self.assertEqual(out, {("series (10.2.2)", "guest"): [2, 1],
                               ("unpatched 10.2.2", "guest"): [2, 0]})

    def test_default_dirs(self):
        """the runner's folders, found anywhere under results/; not the
        loop benchmark's, whatever its folder is called, nor a pooled
        report"""
        with tempfile.TemporaryDirectory() as d:
            def put(sub, head):
                os.makedirs(os.path.join(d, "results", sub))
                with open(os.path.join(d, "results", sub, "samples.csv"),
                          "w") as f:
                    f.write(head + "\n")
            put("bench-multidisk/long-x", "venue,workload,variant,binary")
            put("evidence-y", "venue,variant,round,binary,status")
            put("loopbench-p99", "round,pattern,variant,events")
            put("bench-multidisk/pooled-z", "venue,workload,variant,binary")
            found = [os.path.relpath(p, d) for p in hangs.default_dirs(d)]
        self.assertEqual(found, ["results/bench-multidisk/long-x",
                                 "results/evidence-y"])

    def test_clopper_pearson(self):
        lo, hi = hangs.clopper_pearson(0, 12)
        self.assertEqual(lo, 0.0)
        self.assertAlmostEqual(hi, 1 - 0.025 ** (1 / 12), places=6)
        lo, hi = hangs.clopper_pearson(5, 10)
        self.assertAlmostEqual(lo, 0.187086, places=5)
        self.assertAlmostEqual(hi, 1 - 0.187086, places=5)
        self.assertEqual(hangs.clopper_pearson(3, 3)[1], 1.0)

    def test_fisher(self):
        # a textbook table: two-sided p 0.002759
        self.assertAlmostEqual(hangs.fisher(1, 9, 11, 3), 0.002759,
                               places=5)
        self.assertAlmostEqual(hangs.fisher(0, 10, 0, 10), 1.0)
        # 2 of 2 on one side of two equal halves: 2 x (1/2 x 9/19)
        self.assertAlmostEqual(hangs.fisher(2, 8, 0, 10), 2 * 9 / 38)


if __name__ == "__main__":
    unittest.main()
