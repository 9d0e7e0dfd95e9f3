#!/usr/bin/python3
"""Unit tests of harness/loopbench/run.py: the run lengths, the ratios and
the share of unpatched's latency gain, and the report on made-up samples;
and of price_build.py's parts that need no compiler (the constants, the
build folder of links, the compile command)."""
import csv
import json
import os
import sys
import contextlib
import io
import tempfile
import unittest
import unittest.mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import price_build  # noqa: E402
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


HEADER = """/* the price */
#define AIO_POLL_WAKEUP_NS 8000
/* AIO_POLL_WAKEUP_NS in a comment, not a definition */
#define AIO_POLL_WAKEUP_LATENCY_NS 10000
#define AIO_POLL_WAKEUP_NS_MAX 1
"""


class PriceBuild(unittest.TestCase):
    def test_set_constants(self):
        out = price_build.set_constants(HEADER, (1847, 3721))
        self.assertIn("#define AIO_POLL_WAKEUP_NS 1847\n", out)
        self.assertIn("#define AIO_POLL_WAKEUP_LATENCY_NS 3721\n", out)
        # the rest of the header as it was
        self.assertEqual(out.replace("1847", "8000").replace("3721", "10000"),
                         HEADER)

    def test_set_constants_refuses(self):
        for bad in (HEADER.replace("#define AIO_POLL_WAKEUP_NS 8000\n", ""),
                    HEADER + "#define AIO_POLL_WAKEUP_LATENCY_NS 5\n",
                    HEADER.replace("_NS 8000", "_NS (8 * 1000)")):
            with self.assertRaises(SystemExit):
                price_build.set_constants(bad, (1, 2))

    def test_compile_command(self):
        with tempfile.TemporaryDirectory() as d:
            cmd = ("ccache gcc -Ilibqemuutil.a.p -I. -O2 -MD -MQ x.o -MF x.o.d"
                   " -o libqemuutil.a.p/util_aio-posix.c.o -c"
                   " ../src/util/aio-posix.c")
            with open(os.path.join(d, "compile_commands.json"), "w") as f:
                json.dump([{"directory": d, "file": "../src/util/async.c",
                            "command": "gcc -c ../src/util/async.c"},
                           {"directory": d, "file": "../src/util/aio-posix.c",
                            "command": cmd}], f)
            cwd, args, src = price_build.cgbuild.compile_command(
                d, "util/aio-posix.c")
            self.assertEqual(cwd, d)
            self.assertEqual(args, ["gcc", "-Ilibqemuutil.a.p", "-I.", "-O2"])
            self.assertEqual(src, "../src/util/aio-posix.c")

    def test_link_farm(self):
        with tempfile.TemporaryDirectory() as d:
            build = os.path.join(d, "build")
            objs = os.path.join(build, "libqemuutil.a.p")
            os.makedirs(objs)
            for name in ("util_aio-posix.c.o", "util_async.c.o"):
                open(os.path.join(objs, name), "w").close()
            with open(os.path.join(build, "libqemuutil.a"), "w") as f:
                f.write("!<thin>\n")
            open(os.path.join(build, "build.ninja"), "w").close()
            dest = os.path.join(d, "price")
            price_build.link_farm(build, dest)
            self.assertEqual(sorted(os.listdir(dest)),
                             ["build.ninja", "libqemuutil.a",
                              "libqemuutil.a.p"])
            self.assertTrue(os.path.islink(os.path.join(dest, "build.ninja")))
            # the archive is a copy, so that its members are found in the
            # copy's own folder
            self.assertFalse(os.path.islink(os.path.join(dest,
                                                         "libqemuutil.a")))
            self.assertFalse(os.path.islink(os.path.join(dest,
                                                         "libqemuutil.a.p")))
            # every object but util/aio-posix.c's, linked
            self.assertEqual(os.listdir(os.path.join(dest, "libqemuutil.a.p")),
                             ["util_async.c.o"])
            self.assertEqual(os.readlink(os.path.join(
                dest, "libqemuutil.a.p", "util_async.c.o")),
                os.path.join(objs, "util_async.c.o"))
            # again: the folder is made anew
            price_build.link_farm(build, dest)
            self.assertEqual(len(os.listdir(dest)), 3)

    def test_check(self):
        """--check passes only where the tree's own constants give the
        build's code and others do not, for the object and each target"""
        with tempfile.TemporaryDirectory() as d:
            build = os.path.join(d, "build")
            os.makedirs(os.path.join(build, "libqemuutil.a.p"))
            for f in (price_build.OBJ, "qemu"):
                open(os.path.join(build, f), "w").close()
            tree = os.path.join(d, "tree")
            os.makedirs(os.path.join(tree, "util"))
            with open(os.path.join(tree, "util", "aio-posix.h"), "w") as f:
                f.write(HEADER)

            def fake_build(build_, tree_, cpu, latency, out, targets):
                return os.path.join(out, "%d-%d" % (cpu, latency))

            def run_check(code):
                with unittest.mock.patch.object(
                        price_build, "price_build", fake_build), \
                        unittest.mock.patch.object(
                            price_build, "text",
                            lambda path: code(os.path.relpath(path, d))), \
                        contextlib.redirect_stdout(io.StringIO()):
                    price_build.check(build, tree, os.path.join(d, "out"),
                                      ["qemu"])

            def good(rel):
                # the build's code, again with 8000:10000, other otherwise
                return b"own" if rel.startswith("build/") or \
                    "/8000-10000/" in rel else b"other"
            run_check(good)
            for bad in (
                    # the tree's constants do not give the build's code
                    lambda rel: b"x" if "8000-10000/qemu" in rel
                    else good(rel),
                    # other constants give the build's code
                    lambda rel: b"own" if rel.endswith("/" + price_build.OBJ)
                    else good(rel)):
                with self.assertRaises(SystemExit):
                    run_check(bad)

    def test_unfold(self):
        """A target linked again in a subfolder is written to the copy's
        own folder, never through a link into the build"""
        with tempfile.TemporaryDirectory() as d:
            build = os.path.join(d, "build")
            os.makedirs(os.path.join(build, "libqemuutil.a.p"))
            os.makedirs(os.path.join(build, "sd", "qapi"))
            for name in ("sd/qsd", "sd/qapi/x.o", "libqemuutil.a"):
                with open(os.path.join(build, name), "w") as f:
                    f.write("build's")
            dest = os.path.join(d, "price")
            price_build.link_farm(build, dest)
            self.assertTrue(os.path.islink(os.path.join(dest, "sd")))
            price_build.unfold(dest, "sd/qsd")
            self.assertFalse(os.path.islink(os.path.join(dest, "sd")))
            self.assertEqual(sorted(os.listdir(os.path.join(dest, "sd"))),
                             ["qapi", "qsd"])
            for name in ("qapi", "qsd"):
                self.assertEqual(os.readlink(os.path.join(dest, "sd", name)),
                                 os.path.join(build, "sd", name))
            os.unlink(os.path.join(dest, "sd", "qsd"))
            with open(os.path.join(dest, "sd", "qsd"), "w") as f:
                f.write("price's")
            with open(os.path.join(build, "sd", "qsd")) as f:
                self.assertEqual(f.read(), "build's")
            # a folder already its own stays as it is
            price_build.unfold(dest, "sd/qsd")
            with open(os.path.join(dest, "sd", "qsd")) as f:
                self.assertEqual(f.read(), "price's")


if __name__ == "__main__":
    unittest.main()
