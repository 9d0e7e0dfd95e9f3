#!/usr/bin/python3
"""Offline tests of the benchmark's parsing and reporting (no QEMU, no
guest): /usr/bin/python3 -m unittest discover -s harness/bench -p 'test_*.py'
"""

import csv
import io
import json
import os
import stat
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bases  # noqa: E402
import guest  # noqa: E402
import report  # noqa: E402
import run  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(HERE), "upstream"))
import policy  # noqa: E402


def fio_json(ios=1000, iops=100.0, mean_ns=2000.0, p50=1500, p99=9000):
    empty = {"total_ios": 0, "iops": 0.0, "lat_ns": {"mean": 0.0}}
    return {"jobs": [{
        "read": {"total_ios": ios, "iops": iops,
                 "lat_ns": {"mean": mean_ns, "percentile": {
                     "50.000000": p50, "99.000000": p99}}},
        "write": empty, "trim": empty}]}


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

    def test_sig(self):
        self.assertEqual(report.fnum(0.0456, "sig"), "0.0456")
        self.assertEqual(report.fnum(123.4, "sig"), "123")
        self.assertEqual(report.fnum(None, "sig"), "-")


class Bases(unittest.TestCase):
    def test_side_by_side(self):
        fields = ["venue", "workload", "variant", "round", "status", "iops",
                  "lat_mean_us", "iothread_cpu_ms_per_kio"]
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
                                    "iothread_cpu_ms_per_kio": 999 if rnd == 0 else cpu})
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
        fields = ["venue", "workload", "variant", "round", "status", "iops",
                  "iothread_cpu_ms_per_kio", "iothread_vcsw_per_kio"]
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "samples.csv"), "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=fields)
                w.writeheader()
                for rnd in (0, 1, 2, 3):
                    for v, cpu, cs in (("w3", 60, 300), ("series-floor", 50, 600),
                                       ("upstream", 66, 300),
                                       ("upstream-floor", 50, 600)):
                        w.writerow({"venue": "guest", "workload": "sat",
                                    "variant": v, "round": rnd, "status": "ok",
                                    "iops": 1000, "iothread_cpu_ms_per_kio":
                                    999 if rnd == 0 else cpu,
                                    "iothread_vcsw_per_kio": cs})
            text = policy.report(policy.load([d]))
        lines = text.splitlines()
        w3 = next(l for l in lines if l.startswith("| w3 |"))
        self.assertIn("| 1.200 [1.200, 1.200] | 0.500 [0.500, 0.500] |", w3)
        pair = next(l for l in lines if l.startswith("| w3 / upstream |"))
        # (60/50) / (66/50) = 0.909: the series costs less over its floor
        self.assertIn("| 0.909 [0.909, 0.909] | 1.000 [1.000, 1.000] |", pair)


if __name__ == "__main__":
    unittest.main()
