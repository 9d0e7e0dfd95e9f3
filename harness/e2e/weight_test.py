#!/usr/bin/python3
"""End-to-end: the poll-weight that QMP sets is the weight the policy uses.

qemu-storage-daemon serves a raw file (Linux AIO, O_DIRECT) over NBD from
iothread io1 (polling on: poll-max-ns 32768) with the poll_grow and
poll_shrink trace events enabled (the log backend writes them to the
daemon's stderr); fio reads at random through it, so that the
IOThread's polling time keeps moving.  Each of those events carries
the weight that adjust_polling_time() read from the AioContext for that
iteration.

The test runs phases: io1 is created with --start-weight, then QMP
qom-sets each of --weights in turn.  In each phase, after a short settle
time, it collects the events that the daemon logs for --phase seconds,
and on until --min-events have come or --max-phase seconds have passed,
switching poll-max-ns between 32768 and --kick-low-ns every --kick
seconds.  A policy that settles on one polling time (the series' last
patch does, over steady waits) logs no events until a parameter change
restarts it, and how often it changes its time depends on the host (16
to 365 events in 3 s on the same machine, 2026-12-05).  Nudging
poll-max-ns by 1 ns was not enough: the restarted histogram polls for
AIO_POLL_WAKEUP_NS (8 us) until it holds 8 waits, and where fewer than 8
waits count between two nudges it never moved, so no event came (CI,
2026-12-07: 9 and 14 events in 15 and 45 s at weight 5, where 20 were
needed).  Below 8 us, --kick-low-ns caps that starting time, so the
first wait counted after each switch moves the polling time (8 us to
4 us, or 4 us back to 8 us): about one event a switch.  10 events a
phase are asked for (20 until then): one event of the wrong weight
fails the test, and a tree that hands the policy a constant gives only
such events, so the count guards against a phase with too few to judge,
not against a wrong weight.

Pass iff, in every phase:
  - qom-get and the QMP reply agree with the value set,
  - after each qom-set, the policy logs an event with the new weight
    before the test changes any other parameter (each change passes the
    property's value down too, so the phases' nudges alone would hide a
    qom-set that stops at the property),
  - at least --min-events poll_grow/poll_shrink events were logged, and
  - every one of them carries the weight of the phase.

A tree whose qom-set of poll-weight does not reach the AioContext
until another parameter changes fails the second condition.  A tree
whose iothread.c hands the AioContext a constant instead of the
property's value fails the last: the events keep showing the constant (or the
default) whatever qom-set says.  The weights of the phases differ from
each other, so no constant can match them all.

Example (about 15 s, up to two minutes where few waits count; needs
fio with the nbd engine):
  /usr/bin/python3 harness/e2e/weight_test.py \\
      --qsd work/10.2.2/series/build-all/storage-daemon/qemu-storage-daemon \\
      --qemu-src work/10.2.2/series/src
"""

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, HERE)
import qmpclient  # noqa: E402  (the harness's QMP client: qemu.qmp)
from load_test import check_fio, cleanup, tail  # noqa: E402

EVENT = re.compile(r"\b(poll_grow|poll_shrink) ctx (0x[0-9a-f]+|\(nil\)) "
                   r"old (-?\d+) new (-?\d+) block_ns (-?\d+) "
                   r"estimate (-?\d+) weight (-?\d+)")


POLL_MAX_NS = 32768     # io1's poll-max-ns
# AIO_POLL_WAKEUP_NS, which a restarted policy polls for: read from the
# tree's util/aio-posix.h into args.wakeup_ns
WAKEUP_DEFINE = re.compile(r"^#define AIO_POLL_WAKEUP_NS (\d+)\s*$", re.M)


class TestFailure(Exception):
    pass


def log(msg):
    print(f"weight_test: {msg}", flush=True)


def events_since(path, offset):
    """The poll_grow/poll_shrink events logged after byte @offset, and the
    new end offset (only whole lines)."""
    with open(path, "rb") as f:
        f.seek(offset)
        data = f.read()
    end = data.rfind(b"\n") + 1
    events = []
    for line in data[:end].decode(errors="replace").splitlines():
        m = EVENT.search(line)
        if m:
            events.append({"event": m.group(1), "ctx": m.group(2),
                           "old": int(m.group(3)),
                           "weight": int(m.group(7))})
    return events, offset + end


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--qsd", required=True,
                   help="qemu-storage-daemon of the series build")
    p.add_argument("--qemu-src", required=True,
                   help="QEMU tree (its python/ has qemu.qmp)")
    p.add_argument("--start-weight", type=int, default=5,
                   help="poll-weight io1 is created with (default 5)")
    p.add_argument("--weights", default="1,7",
                   help="weights qom-set one after the other (default 1,7)")
    p.add_argument("--phase", type=float, default=3.0,
                   help="seconds of events collected per weight, at least "
                   "(default 3)")
    p.add_argument("--max-phase", type=float, default=45.0,
                   help="seconds of events collected per weight, at most, "
                   "while fewer than --min-events have come (default 45)")
    p.add_argument("--settle", type=float, default=0.5,
                   help="seconds after qom-set before collecting "
                        "(default 0.5)")
    p.add_argument("--kick", type=float, default=0.2,
                   help="seconds between switches of poll-max-ns during a "
                   "phase, 0 for none (default 0.2)")
    p.add_argument("--kick-low-ns", type=int, default=4096,
                   help="poll-max-ns of every other switch, below the "
                   "tree's AIO_POLL_WAKEUP_NS (default 4096)")
    p.add_argument("--min-events", type=int, default=10,
                   help="events needed per phase (default 10)")
    p.add_argument("--fio", default="fio")
    args = p.parse_args(argv)
    args.weights = [int(w) for w in args.weights.split(",") if w]
    phases = [args.start_weight] + args.weights
    if len(set(phases)) != len(phases) or len(phases) < 3:
        p.error("the start weight and --weights must be at least 3 "
                "different values")
    if any(w < 1 or w > 63 for w in phases):
        p.error("weights must be in 1..63 (0 would select the default)")
    header = os.path.join(args.qemu_src, "util", "aio-posix.h")
    try:
        with open(header) as f:
            m = WAKEUP_DEFINE.search(f.read())
    except OSError as e:
        p.error(f"--qemu-src: {e}")
    if not m:
        p.error(f"{header} defines no AIO_POLL_WAKEUP_NS: not the series' "
                "tree at its last patch")
    args.wakeup_ns = int(m.group(1))
    if not 0 < args.kick_low_ns < args.wakeup_ns:
        p.error(f"--kick-low-ns must be in 1..{args.wakeup_ns - 1}: below "
                f"the {args.wakeup_ns} ns that a restarted policy polls for")
    args.fio = shutil.which(args.fio) or os.path.abspath(args.fio)
    return args


def kick(mon, args, enough):
    """Wait --phase seconds, and on while not enough() until --max-phase
    seconds; every --kick seconds, switch poll-max-ns between 32768 and
    --kick-low-ns.  A parameter change restarts the policy (the series'
    last patch starts its histogram afresh, polling for at most 8 us), so
    its polling time moves and the events keep coming even where a policy
    would otherwise hold one polling time for the whole phase; the weight
    is left alone.  Returns the seconds waited."""
    start = time.monotonic()
    n = 0
    while True:
        waited = time.monotonic() - start
        if waited >= args.max_phase or (waited >= args.phase and enough()):
            return waited
        step = args.max_phase - waited
        if waited < args.phase:
            step = args.phase - waited
        time.sleep(min(step, args.kick) if args.kick > 0 else step)
        if args.kick > 0:
            n += 1
            mon.ok("qom-set", {"path": "/objects/io1",
                               "property": "poll-max-ns",
                               "value": (args.kick_low_ns if n % 2
                                         else POLL_MAX_NS)})


def wait_event(path, offset, want, timeout):
    """Poll the log from byte @offset for up to @timeout seconds for an
    event that want(event) accepts; return it, or None."""
    deadline = time.monotonic() + timeout
    while True:
        for e in events_since(path, offset)[0]:
            if want(e):
                return e
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.05)


def qom_set_weight(mon, args, errlog, weight):
    """qom-set io1's poll-weight and check that the policy uses it before
    anything else reaches the AioContext.  The nudges of the phases pass
    the property's value down with every poll-max-ns they set, so they
    would hide a qom-set of poll-weight that stops at the property; this
    sends none until the policy has logged an event with @weight.
    First poll-max-ns is set to POLL_MAX_NS and the policy is left to
    settle: it polls for args.wakeup_ns until it holds 8 waits, then
    moves away from it (a bin edge or 0, never that).  The qom-set then
    restarts it again, so the first wait it counts moves its time back
    to args.wakeup_ns: an event that must carry the new weight."""
    io1 = {"path": "/objects/io1", "property": "poll-weight"}
    _, offset = events_since(errlog, 0)
    mon.ok("qom-set", {"path": "/objects/io1", "property": "poll-max-ns",
                       "value": POLL_MAX_NS})
    if not wait_event(errlog, offset, lambda e: e["old"] == args.wakeup_ns,
                      args.max_phase):
        raise TestFailure(f"no event in {args.max_phase} s after a restart "
                          "of the policy: is polling on and I/O flowing?")
    _, offset = events_since(errlog, 0)
    rsp = mon.raw("qom-set", dict(io1, value=weight))
    if "return" not in rsp:
        raise TestFailure(f"qom-set poll-weight={weight}: {rsp}")
    if not wait_event(errlog, offset, lambda e: e["weight"] == weight,
                      args.max_phase):
        raise TestFailure(f"qom-set poll-weight={weight}: no event with "
                          f"that weight in {args.max_phase} s, and none of "
                          "the phase's other parameter changes sent yet")
    got = mon.ok("qom-get", io1)
    if got != weight:
        raise TestFailure(f"qom-set poll-weight={weight}, qom-get "
                          f"reads {got}")
    return got


def run(args, tmp, state):
    check_fio(args.fio)
    # Data, not holes: the NBD server answers reads of holes without
    # reading the file, so no I/O would reach the IOThread's Linux AIO
    # completion handler, the handler that polling watches.
    image = os.path.join(tmp, "disk.raw")
    with open(image, "wb") as f:
        for _ in range(32):
            f.write(os.urandom(2**20))
    qmp_sock = os.path.join(tmp, "qmp.sock")
    nbd_sock = os.path.join(tmp, "nbd.sock")
    errlog = os.path.join(tmp, "qsd.log")
    cmd = [args.qsd,
           "--trace", "poll_grow", "--trace", "poll_shrink",
           "--object", f"iothread,id=io1,poll-max-ns={POLL_MAX_NS},"
                       f"poll-weight={args.start_weight}",
           "--blockdev", f"driver=file,node-name=file0,filename={image},"
                         "aio=native,cache.direct=on",
           "--blockdev", "driver=raw,node-name=disk0,file=file0",
           "--nbd-server", f"addr.type=unix,addr.path={nbd_sock}",
           "--export", "type=nbd,id=exp0,node-name=disk0,name=d0,"
                       "iothread=io1",
           "--chardev", f"socket,id=qmp0,path={qmp_sock},server=on,wait=off",
           "--monitor", "chardev=qmp0"]
    log("daemon: " + " ".join(cmd))
    with open(errlog, "w") as f:
        qsd = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=f,
                               stderr=subprocess.STDOUT,
                               start_new_session=True)
    state["qsd"], state["log"] = qsd, errlog
    mon = qmpclient.Monitor(args.qemu_src, qmp_sock, proc=qsd)
    state["mon"] = mon

    io1 = {"path": "/objects/io1", "property": "poll-weight"}
    got = mon.ok("qom-get", io1)
    if got != args.start_weight:
        raise TestFailure(f"io1 created with poll-weight="
                          f"{args.start_weight} reads {got}")

    # Random reads 16 deep: the IOThread waits for completions, so its
    # polling time grows and shrinks all the time.  Not 1 deep: with
    # 10.0's fdmon-io_uring every fd event re-arms its poll request, so
    # that the next wait may not poll, and at QD1 every wait either
    # follows one or has a timeout of 0 (a bottom half due); patches
    # 13 and 15 count neither, and the policy would never run.
    runtime = int((max(args.phase, args.max_phase) + args.settle) *
                  (len(args.weights) + 1) + 10)
    fio = subprocess.Popen(
        [args.fio, "--name=load", "--ioengine=nbd",
         f"--uri=nbd+unix:///d0?socket={nbd_sock}", "--rw=randread",
         "--bs=4k", "--iodepth=16", "--time_based", f"--runtime={runtime}",
         "--size=32M", "--output-format=terse"],
        stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "fio.err"),
                                               "w"),
        cwd=tmp, start_new_session=True)
    state["fio"] = fio

    offset = 0
    results = []
    for i, weight in enumerate([args.start_weight] + args.weights):
        if i:
            got = qom_set_weight(mon, args, errlog, weight)
        time.sleep(args.settle)
        _, offset = events_since(errlog, offset)
        start = offset
        waited = kick(mon, args, lambda: len(events_since(errlog, start)[0])
                      >= args.min_events)
        if fio.poll() is not None:
            raise TestFailure(f"fio exited early with {fio.returncode}: "
                              f"{tail(os.path.join(tmp, 'fio.err'))}")
        events, offset = events_since(errlog, offset)
        seen = collections.Counter(e["weight"] for e in events)
        kinds = collections.Counter(e["event"] for e in events)
        ctxs = collections.Counter(e["ctx"] for e in events)
        line = (f"poll-weight {weight} (qom-get {got}): {len(events)} events "
                f"({dict(kinds)}) in {waited:.1f} s; weights they carry: "
                f"{dict(sorted(seen.items()))}; contexts: {len(ctxs)}")
        log(line)
        results.append((weight, len(events), seen))

    bad = []
    for weight, n, seen in results:
        if n < args.min_events:
            bad.append(f"poll-weight {weight}: only {n} events "
                       f"(--min-events {args.min_events}): is polling on "
                       "and I/O flowing?")
        elif set(seen) != {weight}:
            bad.append(f"poll-weight {weight} was set, but the policy used "
                       f"{dict(sorted(seen.items()))}")
    if bad:
        raise TestFailure("; ".join(bad))


def main(argv=None):
    args = parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="apw-weight-")
    state = {}
    failure = None
    try:
        run(args, tmp, state)
    except (TestFailure, qmpclient.QMPFailure) as e:
        failure = str(e)
    except Exception as e:  # pylint: disable=broad-except
        failure = f"unexpected {e!r}"
    if failure and state.get("log"):
        lines = [ln for ln in tail(state["log"], 200).splitlines()
                 if not EVENT.search(ln)]
        if lines:
            log("daemon output other than the events:\n" +
                "\n".join(lines[-15:]))
    try:
        cleanup(state, tmp, keep=False)
    except KeyboardInterrupt:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if failure:
        log(f"FAIL: {failure}")
        return 1
    log("PASS: every phase's events carry the weight that qom-set gave")
    return 0


if __name__ == "__main__":
    sys.exit(main())
