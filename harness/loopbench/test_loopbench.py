#!/usr/bin/python3
"""Unit tests of harness/loopbench/run.py: the run lengths, the ratios and
the share of unpatched's latency gain, and the report on made-up samples."""
import csv
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402


def sample(rnd, pattern, variant, cpu, notify, p50):
    r = {k: "0" for k in run.FIELDS}
    r.update({"round": str(rnd), "pattern": pattern, "variant": variant,
              "events": "1000", "cpu_ns_per_event": str(cpu),
              "notify_ns_per_event": str(notify),
              "total_cpu_ns_per_event": str(cpu + notify),
              "lat_p50_ns": str(p50), "lat_mean_ns": str(p50 * 2),
              "by_poll": "900" if variant != "floor" else "0",
              "by_fd": "100"})
    return r


class Lengths(unittest.TestCase):
    def test_mean_gap(self):
        self.assertEqual(run.mean_gap("fixed:3000"), 3000)
        self.assertEqual(run.mean_gap("exp:30000"), 30000)
        # 15 gaps of 3 us and one of 500 us per 16 events
        self.assertAlmostEqual(run.mean_gap("bursts:3000,16,500000"),
                               (15 * 3000 + 500000) / 16)
        with self.assertRaises(SystemExit):
            run.mean_gap("uniform:5")

    def test_events_for(self):
        self.assertEqual(run.events_for("fixed:20000", 400), 20000)
        self.assertEqual(run.events_for("fixed:1000", 400), 200000)  # cap
        self.assertEqual(run.events_for("fixed:1000000", 400), 3000)  # floor


class Ratios(unittest.TestCase):
    def rounds(self, pairs):
        return {str(i): {"lat_p50_ns": str(x)} for i, x in enumerate(pairs)}

    def test_gain_share(self):
        fl = self.rounds([10000, 12000])
        un = self.rounds([1000, 2000])
        # keeps all of the gain, none of it, half of it
        self.assertEqual(run.gain_ratios(self.rounds([1000, 2000]), un, fl),
                         [1.0, 1.0])
        self.assertEqual(run.gain_ratios(self.rounds([10000, 12000]), un, fl),
                         [0.0, 0.0])
        self.assertEqual(run.gain_ratios(self.rounds([5500, 7000]), un, fl),
                         [0.5, 0.5])

    def test_no_gain_no_share(self):
        # where unpatched gains nothing, a round gives no share
        fl = self.rounds([10000])
        self.assertEqual(run.gain_ratios(self.rounds([5000]),
                                         self.rounds([11000]), fl), [])

    def test_mean_interval(self):
        m, lo, hi, n = run.mean_interval([1.0, 1.0, 1.0])
        self.assertEqual((m, lo, hi, n), (1.0, 1.0, 1.0, 3))
        m, lo, hi, n = run.mean_interval([0.9, 1.1])
        self.assertAlmostEqual(m, 1.0)
        self.assertLess(lo, 0.9)
        self.assertGreater(hi, 1.1)


class Report(unittest.TestCase):
    def test_verdicts(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "meta.txt"), "w") as f:
                f.write("date: test\n")
            rows = []
            for rnd in range(1, 6):
                j = rnd * 10
                rows += [
                    sample(rnd, "fixed:20000", "floor", 5000 + j, 6000, 12000),
                    # polls: twice the floor's CPU, the latency gain
                    sample(rnd, "fixed:20000", "unpatched", 22000 + j, 100,
                           600),
                    # blocks: the floor's CPU, no gain
                    sample(rnd, "fixed:20000", "new", 5000 + j, 6000 + j,
                           12000 + j),
                    # polls where it saves the notifier's fd write: less
                    # CPU than the floor counted on both sides
                    sample(rnd, "fixed:20000", "series", 9000 + j, 100, 600),
                ]
            with open(os.path.join(d, "samples.csv"), "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=run.FIELDS)
                w.writeheader()
                w.writerows(rows)
            run.report(d)
            with open(os.path.join(d, "report.md")) as f:
                text = f.read()
        lines = {x.split("|")[1].strip(): x for x in text.splitlines()
                 if x.startswith("| ") and "[" in x}
        self.assertIn("**missed**", lines["unpatched"])   # 2x the floor
        new = lines["new"].split("|")
        self.assertIn("**met**", new[2])            # CPU within 1.05x
        self.assertIn("**missed**", new[6])         # no share of the gain
        series = lines["series"].split("|")
        self.assertIn("**met**", series[2])         # loop + notifier
        self.assertIn("**met**", series[6])         # all of the gain
        self.assertIn("loop + notifier", text)


if __name__ == "__main__":
    unittest.main()
