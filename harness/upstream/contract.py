#!/usr/bin/python3
"""The poll-weight contract, upstream QEMU 11.1.3 against the series.

Sends the cases of the series' qtest (tests/qtest/iothread-poll-weight-test.c:
creation, qom-set/qom-get of every poll parameter with valid, boundary and
invalid values, object-add, query-iothreads, HMP "info iothreads", the
command line) to two QEMU binaries and compares the replies field by field:
query-iothreads and "info iothreads" per IOThread and member (thread ids
left out), errors by class and text, the command line by exit status and
stderr.  Every difference must be a known one (KNOWN below, per base, each
with its reason) named in the base's cover letter; a known difference that
no longer shows is an error too, so that the list stays true.

  contract.py --upstream BIN --series BIN --qemu-src TREE --base BASE
              [--cover-letter FILE] [--dump DIR]
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

# Values as JSON text, sent as they are (so that 5.0 stays a float).
OUT_OF_RANGE = [
    "-1", "64", "65", "67", "100", "127", "128", "255", "256", "259",
    "4096", "-63", "-64", "2147483647", "2147483648", "-2147483648",
    "4294967296", "4294967299", "9223372036854775807",
    "-9223372036854775808",
]
WRONG_TYPE = [
    '"5"', '"abc"', '""', '"0x10"', "2.5", "5.0", "3.0", "63.0", "0.0",
    "-1.5", "1e1", "true", "false", "null", "[3]", "{}",
    "18446744073709551615",
]
POLL_PARAMS = ["poll-max-ns", "poll-grow", "poll-shrink"]
ALL_PARAMS = POLL_PARAMS + ["poll-weight"]

# Differences that stay, per base: id -> (regex on the difference line,
# reason).  The id must appear in patches/BASE/cover-letter.txt.
KNOWN = {
    "10.2.2": {},
    "10.0.13": {},
}


# ------------------------------------------------------------------ cases

def get_all(ids):
    ops = []
    for i in ids:
        ops += [("get", i, p) for p in ALL_PARAMS]
    return ops + [("query",), ("hmp",)]


def sessions():
    """[(name, [-object args], [ops])], after the qtest's cases."""
    s = []
    s.append(("defaults", ["iothread,id=io1"], get_all(["io1"]) + [("props",)]))
    s.append(("create", [
        "iothread,id=io1,poll-weight=3", "iothread,id=io2,poll-weight=17",
        "iothread,id=io3,poll-weight=63", "iothread,id=io4,poll-weight=1",
        "iothread,id=io5,poll-weight=0", "iothread,id=io6"],
        get_all(["io%d" % i for i in range(1, 7)])))
    s.append(("create-json", [
        '{"qom-type": "iothread", "id": "io1", "poll-weight": 42}'],
        get_all(["io1"])))
    ops = []
    for v in ["0", "50", "0", "0"]:
        ops += [("set", "io1", "poll-weight", v), ("get", "io1", "poll-weight")]
    s.append(("set-zero", ["iothread,id=io1,poll-weight=10"], ops + [("query",)]))
    ops = []
    for v in list(range(1, 64)) + list(range(63, 0, -2)):
        ops += [("set", "io1", "poll-weight", str(v)), ("get", "io1", "poll-weight")]
    s.append(("set-range", ["iothread,id=io1,poll-weight=3"], ops + [("query",)]))
    ops = []
    for i in ("io1", "io2"):
        for v in OUT_OF_RANGE + WRONG_TYPE:
            ops += [("set", i, "poll-weight", v), ("get", i, "poll-weight")]
    ops += [("set", "io1", "poll-weight", "33")] + get_all(["io1", "io2"])
    s.append(("set-invalid", ["iothread,id=io1,poll-weight=9", "iothread,id=io2"], ops))
    ops = []
    for v in OUT_OF_RANGE + WRONG_TYPE:
        ops += [("add", "iobad", {"poll-weight": v}), ("query",)]
    for v in ("21", "0", "63"):
        ops += [("add", "iobad", {"poll-weight": v})] + get_all(["iobad"])
        ops += [("set", "iobad", "poll-weight", "0"), ("get", "iobad", "poll-weight"),
                ("del", "iobad"), ("query",)]
    s.append(("object-add", [], ops))
    s.append(("hmp", ["iothread,id=io1,poll-weight=3", "iothread,id=io2,poll-weight=12"],
              [("hmp",), ("set", "io2", "poll-weight", "0"), ("hmp",), ("query",)]))
    ops = get_all(["io1"])
    for p, v in [("poll-weight", "40"), ("poll-weight", "0"), ("poll-weight", "64"),
                 ("poll-weight", "7"), ("poll-max-ns", "50000")]:
        ops += [("set", "io1", p, v)] + get_all(["io1"])
    ops += [("add", "io2", {"poll-max-ns": "0", "poll-weight": "63"})] + get_all(["io2"])
    s.append(("poll-max-ns-zero", ["iothread,id=io1,poll-max-ns=0,poll-weight=12"], ops))
    ops = get_all(["io1"])
    for p, v in [("poll-weight", "20"), ("poll-max-ns", "2000"), ("poll-grow", "3"),
                 ("poll-shrink", "5"), ("poll-weight", "-1"), ("poll-grow", "-1")]:
        ops += [("set", "io1", p, v)] + get_all(["io1"])
    s.append(("independent", [
        "iothread,id=io1,poll-max-ns=1000,poll-grow=2,poll-shrink=4,poll-weight=9"], ops))
    # poll-max-ns, poll-grow and poll-shrink
    s.append(("params-create", [
        "iothread,id=io1,poll-max-ns=12345,poll-grow=3,poll-shrink=5",
        "iothread,id=io2,poll-max-ns=0",
        "iothread,id=io3,poll-grow=0,poll-shrink=0"],
        get_all(["io1", "io2", "io3"])))
    ops = []
    good = ["0", "1", "7", "1000000", "9223372036854775807", "2", "0", "16"]
    bad = ["-1", "-9223372036854775808", '"5"', "2.5", "5.0", "true", "null", "{}",
           "18446744073709551615"]
    for p in POLL_PARAMS:
        for v in good + bad:
            ops += [("set", "io1", p, v), ("get", "io1", p)]
        ops += [("query",), ("hmp",)]
    s.append(("params-set", ["iothread,id=io1"], ops))
    ops = []
    for p in POLL_PARAMS:
        for v in ("-1", '"x"', "0", "77"):
            ops += [("add", "iobad", {p: v})] + get_all(["iobad"]) + [("del", "iobad")]
    s.append(("params-object-add", [], ops))
    return s


def cmdlines():
    """-object arguments given to QEMU alone; it exits on a bad one, and on
    the missing device otherwise."""
    c = []
    for v in OUT_OF_RANGE[:6] + OUT_OF_RANGE[-4:]:
        c.append("iothread,id=io1,poll-weight=%s" % v)
        c.append('{"qom-type": "iothread", "id": "io1", "poll-weight": %s}' % v)
    for v in ("abc", "1.5", "", "true", "0x10"):
        c.append("iothread,id=io1,poll-weight=%s" % v)
    for v in ('"5"', "null", "5.0"):
        c.append('{"qom-type": "iothread", "id": "io1", "poll-weight": %s}' % v)
    for v in ("0", "1", "63"):
        c.append("iothread,id=io1,poll-weight=%s" % v)
    for p in POLL_PARAMS:
        for v in ("-1", "abc", "0", "8"):
            c.append("iothread,id=io1,%s=%s" % (p, v))
    return c


# ------------------------------------------------------------------ running

NO_DEVICE = "apw-no-such-device"


def norm_stderr(text):
    text = re.sub(r"\S*/(qemu-system-x86_64)", r"\1", text)
    return text.strip()


def hmp_fields(text):
    """info iothreads text -> {ID.KEY: VALUE}, plus the order of the lines."""
    f, cur, order = {}, None, []
    for line in text.replace("\r", "").split("\n"):
        if not line.strip():
            continue
        if not line.startswith(" ") and line.endswith(":"):
            cur = line[:-1]
            order.append(cur + ":")
            continue
        k, _, v = line.strip().partition("=")
        order.append("  " + k)
        if k != "thread_id":
            f["%s.%s" % (cur, k)] = v
    f["lines"] = " | ".join(order)
    return f


def reply_fields(op, r):
    if "error" in r:
        return {"error.class": r["error"].get("class"),
                "error.desc": r["error"].get("desc")}
    ret = r.get("return")
    if op[0] == "query":
        f = {}
        for t in ret:
            for k, v in t.items():
                if k not in ("id", "thread-id"):
                    f["%s.%s" % (t["id"], k)] = v
        f["ids"] = " ".join(sorted(t["id"] for t in ret))
        return f
    if op[0] == "hmp":
        return hmp_fields(ret)
    if op[0] == "props":
        return {"iothread properties": " ".join(sorted(
            "%s:%s" % (p["name"], p["type"]) for p in ret))}
    return {"return": ret}


class Qemu:
    def __init__(self, exe, objects, tmp, qmp_cls):
        self.sock = os.path.join(tmp, "qmp.sock")
        if os.path.exists(self.sock):
            os.unlink(self.sock)
        cmd = [exe, "-machine", "none", "-display", "none", "-nodefaults",
               "-qmp", "unix:%s,server=on,wait=off" % self.sock]
        for o in objects:
            cmd += ["-object", o]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while not os.path.exists(self.sock):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("%s did not start: %s" % (
                    exe, self.proc.stderr.read().decode(errors="replace")))
            time.sleep(0.02)
        while True:     # the socket file shows before QEMU listens on it
            self.qmp = qmp_cls(self.sock)
            try:
                self.qmp.connect()
                break
            except Exception:   # pylint: disable=broad-except
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise
                time.sleep(0.02)
        self.qmp.settimeout(30)

    def raw(self, cmd, args=None):
        return self.qmp.cmd_raw(cmd, args)

    def run(self, op):
        kind = op[0]
        if kind == "get":
            return self.raw("qom-get", {"path": "/objects/" + op[1], "property": op[2]})
        if kind == "set":
            return self.raw("qom-set", {"path": "/objects/" + op[1], "property": op[2],
                                        "value": json.loads(op[3])})
        if kind == "add":
            a = {"qom-type": "iothread", "id": op[1]}
            a.update({k: json.loads(v) for k, v in op[2].items()})
            return self.raw("object-add", a)
        if kind == "del":
            return self.raw("object-del", {"id": op[1]})
        if kind == "query":
            return self.raw("query-iothreads")
        if kind == "hmp":
            return self.raw("human-monitor-command", {"command-line": "info iothreads"})
        if kind == "props":
            return self.raw("qom-list-properties", {"typename": "iothread"})
        raise ValueError(op)

    def close(self):
        try:
            self.raw("quit")
            self.qmp.close()
        except (EOFError, OSError):
            pass    # QEMU quit before the reply could be read
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def op_text(op):
    if op[0] == "add":
        return "object-add %s %s" % (op[1], ",".join("%s=%s" % kv for kv in op[2].items()))
    if op[0] == "set":
        return "qom-set %s %s=%s" % op[1:]
    if op[0] == "get":
        return "qom-get %s %s" % op[1:]
    return {"del": "object-del %s", "query": "query-iothreads",
            "hmp": "HMP info iothreads", "props": "qom-list-properties iothread"}[op[0]] % op[1:]


def run_all(exe, qmp_cls, tmp):
    """{(case, step text): {field: value}} for one binary."""
    out = {}
    for name, objects, ops in sessions():
        q = Qemu(exe, objects, tmp, qmp_cls)
        try:
            for n, op in enumerate(ops):
                try:
                    r = q.run(op)
                except (EOFError, OSError) as e:
                    q.proc.kill()
                    raise RuntimeError("%s: %s: %s: QEMU went away (%r): %s" % (
                        exe, name, op_text(op), e,
                        q.proc.stderr.read().decode(errors="replace"))) from e
                out[("%s#%d" % (name, n), op_text(op))] = reply_fields(op, r)
        finally:
            q.close()
    for n, obj in enumerate(cmdlines()):
        p = subprocess.run([exe, "-machine", "none", "-display", "none", "-nodefaults",
                            "-object", obj, "-device", NO_DEVICE],
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=60)
        err = norm_stderr(p.stderr.decode(errors="replace"))
        out[("cmdline#%d" % n, "-object " + obj)] = {
            "exit status": p.returncode,
            "stderr": err,
            "objects accepted": NO_DEVICE in err,
        }
    return out


def compare(up, se):
    diffs = []
    for key in up:
        a, b = up[key], se.get(key)
        if b is None:
            diffs.append("%s %s: missing from the series' run" % key)
            continue
        for f in sorted(set(a) | set(b)):
            if a.get(f, "<absent>") != b.get(f, "<absent>"):
                diffs.append("%s %s: %s: upstream %s, series %s" % (
                    key[0], key[1], f, json.dumps(a.get(f, "<absent>")),
                    json.dumps(b.get(f, "<absent>"))))
    return diffs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--series", required=True)
    ap.add_argument("--qemu-src", required=True, help="tree whose python/ has qemu.qmp")
    ap.add_argument("--base", required=True, choices=sorted(KNOWN))
    ap.add_argument("--cover-letter")
    ap.add_argument("--dump", help="write both runs' replies as JSON here")
    a = ap.parse_args()
    sys.path.insert(0, os.path.join(a.qemu_src, "python"))
    from qemu.qmp.legacy import QEMUMonitorProtocol  # pylint: disable=import-outside-toplevel

    tmp = tempfile.mkdtemp(prefix="apw-contract-")
    try:
        t0 = time.monotonic()
        up = run_all(a.upstream, QEMUMonitorProtocol, tmp)
        t1 = time.monotonic()
        se = run_all(a.series, QEMUMonitorProtocol, tmp)
        t2 = time.monotonic()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    nfields = sum(len(v) for v in up.values())
    print("%d steps, %d fields compared (upstream %.1f s, series %.1f s)" % (
        len(up), nfields, t1 - t0, t2 - t1))
    if a.dump:
        os.makedirs(a.dump, exist_ok=True)
        for name, run in (("upstream", up), ("series", se)):
            with open(os.path.join(a.dump, name + ".json"), "w") as f:
                json.dump([[k[0], k[1], v] for k, v in run.items()], f, indent=1)

    known = KNOWN[a.base]
    cover = open(a.cover_letter).read() if a.cover_letter else ""
    seen, bad = set(), []
    for d in compare(up, se):
        ids = [i for i, (rx, _) in known.items() if re.search(rx, d)]
        if ids:
            seen.update(ids)
            print("known (%s): %s" % (ids[0], d))
        else:
            bad.append(d)
            print("DIFFERENCE: %s" % d)
    rc = 0
    for i, (rx, why) in sorted(known.items()):
        if i not in seen:
            print("stale: known difference %s (%s) no longer shows" % (i, why))
            rc = 1
        elif a.cover_letter and i not in cover:
            print("known difference %s is not named in %s" % (i, a.cover_letter))
            rc = 1
        else:
            print("explained: %s: %s" % (i, why))
    if bad:
        print("%d unexplained difference(s) from upstream" % len(bad))
        rc = 1
    if rc == 0:
        print("contract: the series answers as upstream 11.1.3 does, "
              "but for %d explained difference(s)" % len(seen))
    return rc


if __name__ == "__main__":
    sys.exit(main())
