#!/usr/bin/python3
"""Record an aio-poll-replay trace from a real run, or convert a trace log.

Record: qemu-storage-daemon (of the series, with the 'log' trace backend)
exports a raw file over NBD from iothread io1, with the poll_* trace
events on; fio's nbd engine drives it for --runtime seconds; the log is
then converted.

    record.py --qsd work/10.2.2/series/build-all/storage-daemon/qemu-storage-daemon \\
              --out harness/replay/traces/nbd-randread-qd1.trace

Convert only (a log of 'poll_estimate ctx .. node .. block_ns N old N new N'
lines, as -d trace:poll_estimate or --trace poll_* write them):

    record.py --convert LOG --out FILE.trace

Model check (--model-check): record unpatched QEMU 10.2.2 instead, built
with base-trace-10.2.2.patch, which adds the trace event poll_adjust (ctx,
node, block_ns and the handler's poll.ns before each adjust_polling_time()
call), and write what `aio-poll-replay --model-check` reads: the first
--max-calls calls of the busiest AioContext and the poll_grow/poll_shrink
events that they emitted, in order, from the start of the run (the model
starts every handler at 0 ns, as the real one does).  --poll-max-ns,
--poll-grow and --poll-shrink set the IOThread's parameters:

    record.py --model-check --runtime 3 \\
        --qsd work/10.2.2/base-trace/build-all/storage-daemon/qemu-storage-daemon \\
        --out harness/replay/traces/unpatched-randread-qd1.modelcheck

(record-unpatched.sh builds that daemon and makes both recordings.)

    record.py --model-check --convert LOG --out FILE.modelcheck \\
        [--poll-max-ns N --poll-grow N --poll-shrink N]

How the log becomes a trace: poll_estimate is emitted once per polled
handler that fired in an aio_poll() iteration, with that iteration's
block_ns.  Consecutive lines with the same AioContext and block_ns, and
distinct nodes, are one iteration; a poll_grow/poll_shrink line or a
repeated node ends it.  The trace's clock is the sum of block_ns: the time
that the loop spent blocked (polling included) in the iterations where a
polled handler fired.  Iterations where none fired (a socket read, a
bottom half) leave no line, so their time is not on this clock; the replay
sees each handler fire after the block_ns that the real policy saw.  Each
node becomes a handler id in order of first appearance; only the
AioContext with the most lines is kept.  --skip iterations are dropped
from the start (warm-up) and at most --max-iters are kept, so that the
trace stays small.
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

LINE = re.compile(r"(poll_estimate|poll_grow|poll_shrink) ctx (\S+)"
                  r"(?: node (\S+))?.* block_ns (-?\d+)")


def read_per_ctx(log_path, regex, record):
    """The trace lines that match regex, as record(match), per AioContext"""
    per_ctx = {}
    with open(log_path, errors="replace") as f:
        for line in f:
            m = regex.search(line)
            if m:
                per_ctx.setdefault(m.group(2), []).append(record(m))
    return per_ctx


def convert(log_path, out_path, skip, max_iters, header):
    per_ctx = read_per_ctx(log_path, LINE, lambda m: (m.group(1), m.group(3),
                                                      int(m.group(4))))
    if not per_ctx:
        sys.exit(f"record.py: no poll_estimate lines in {log_path}")
    ctx, recs = max(per_ctx.items(), key=lambda kv: len(kv[1]))

    iters = []      # (block_ns, [nodes])
    cur = None
    for kind, node, block_ns in recs:
        if kind != "poll_estimate":
            cur = None
            continue
        if cur is None or cur[0] != block_ns or node in cur[1]:
            cur = (block_ns, [])
            iters.append(cur)
        cur[1].append(node)

    window = iters[skip:skip + max_iters]
    if not window:
        sys.exit(f"record.py: only {len(iters)} iterations in {log_path}")
    ids = {}
    t = 0
    lines = []
    for block_ns, nodes in window:
        t += max(block_ns, 0)
        for node in nodes:
            h = ids.setdefault(node, len(ids))
            if h >= 64:
                sys.exit("record.py: more than 64 polled handlers")
            lines.append(f"{t} {h}\n")
    with open(out_path, "w") as f:
        f.write("# aio-poll-replay trace: <time_ns> <handler_id>\n")
        for h in header:
            f.write(f"# {h}\n")
        f.write(f"# converted by harness/replay/record.py from the "
                f"poll_estimate lines of AioContext {ctx}: iterations "
                f"{skip}..{skip + len(window) - 1} of {len(iters)}, "
                f"{len(ids)} handler(s), {t} ns of blocked time\n")
        f.writelines(lines)
    print(f"record.py: {out_path}: {len(window)} iterations, {len(lines)} "
          f"events, {len(ids)} handler(s), {t / 1e6:.3f} ms "
          f"({os.path.getsize(out_path)} bytes)")


MC_LINE = re.compile(r"\b(poll_adjust|poll_grow|poll_shrink) ctx (\S+) "
                     r"(?:node (\S+) block_ns (-?\d+) ns (-?\d+)"
                     r"|old (-?\d+) new (-?\d+))")


def convert_model_check(log_path, out_path, max_calls, params, header):
    """poll_adjust/poll_grow/poll_shrink log lines -> a model check file"""
    per_ctx = read_per_ctx(log_path, MC_LINE, lambda m: m.groups())
    adjusts = {c: sum(r[0] == "poll_adjust" for r in recs)
               for c, recs in per_ctx.items()}
    if not adjusts or not max(adjusts.values()):
        sys.exit(f"record.py: no poll_adjust lines in {log_path} (a "
                 f"daemon without base-trace-10.2.2.patch?)")
    ctx = max(adjusts, key=lambda c: adjusts[c])

    ids = {}
    out = []
    calls = 0
    events = {"grow": 0, "shrink": 0}
    for kind, _, node, block_ns, ns, old, new in per_ctx[ctx]:
        if kind == "poll_adjust":
            if calls == max_calls:
                break
            h = ids.setdefault(node, len(ids))
            if h >= 64:
                sys.exit("record.py: more than 64 polled handlers")
            out.append(f"adjust {h} {block_ns} {ns}\n")
            calls += 1
        elif calls:
            word = kind[len("poll_"):]
            out.append(f"{word} {old} {new}\n")
            events[word] += 1
    with open(out_path, "w") as f:
        f.write("# aio-poll-replay --model-check: adjust_polling_time() "
                "calls of unpatched QEMU 10.2.2\n")
        for h in header:
            f.write(f"# {h}\n")
        f.write(f"# converted by harness/replay/record.py --model-check "
                f"from AioContext {ctx}: the first {calls} of "
                f"{adjusts[ctx]} calls, {len(ids)} handler(s), "
                f"{events['grow']} grow and {events['shrink']} shrink "
                f"events\n")
        f.write("params %d %d %d\n" % params)
        f.writelines(out)
    print(f"record.py: {out_path}: {calls} calls of {adjusts[ctx]}, "
          f"{events['grow']} grow, {events['shrink']} shrink, {len(ids)} "
          f"handler(s) ({os.path.getsize(out_path)} bytes)")


def wait_for(path, proc, timeout):
    end = time.monotonic() + timeout
    while not os.path.exists(path):
        if proc.poll() is not None:
            sys.exit(f"record.py: daemon exited with {proc.returncode}")
        if time.monotonic() > end:
            sys.exit(f"record.py: no {path} after {timeout} s")
        time.sleep(0.05)


def record(args):
    tmp = os.path.abspath(tempfile.mkdtemp(prefix="apw-replay-rec-",
                                           dir=args.tmp))
    proc = None
    try:
        image = os.path.join(tmp, "disk.raw")
        with open(image, "wb") as f:   # allocated blocks, not holes
            block = bytes(range(256)) * 4096
            for _ in range(args.size_mib):
                f.write(block)
        nbd_sock = os.path.join(tmp, "nbd.sock")
        log = os.path.join(tmp, "trace.log")
        iothread = "iothread,id=io1"
        if args.poll_weight is not None:
            iothread += f",poll-weight={args.poll_weight}"
        for prop in ("poll_max_ns", "poll_grow", "poll_shrink"):
            if getattr(args, prop) is not None:
                iothread += f",{prop.replace('_', '-')}={getattr(args, prop)}"
        cmd = [args.qsd, "--trace", f"enable=poll_*,file={log}",
               "--object", iothread,
               "--blockdev", f"driver=file,node-name=file0,filename={image},"
                             f"aio={args.aio},cache.direct=on",
               "--blockdev", "driver=raw,node-name=disk0,file=file0",
               "--nbd-server", f"addr.type=unix,addr.path={nbd_sock}",
               "--export", "type=nbd,id=exp0,node-name=disk0,name=disk0,"
                           "writable=on,iothread=io1"]
        print("record.py: " + " ".join(cmd), flush=True)
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                start_new_session=True)
        wait_for(nbd_sock, proc, 30)
        fio = [args.fio, "--name=rec", "--ioengine=nbd",
               f"--uri=nbd+unix:///disk0?socket={nbd_sock}",
               f"--rw={args.rw}", f"--bs={args.bs}",
               f"--iodepth={args.iodepth}", f"--size={args.size_mib}M",
               "--time_based", f"--runtime={args.runtime}",
               "--randseed=1", "--output-format=json"]
        print("record.py: " + " ".join(fio), flush=True)
        out = subprocess.run(fio, capture_output=True, text=True, cwd=tmp)
        if out.returncode:
            sys.exit(f"record.py: fio failed: {out.stderr[-2000:]}")
        job = json.loads(out.stdout[out.stdout.index("{"):])["jobs"][0]
        side = job["read"] if job["read"]["io_bytes"] else job["write"]
        summary = (f"fio {args.rw} bs={args.bs} iodepth={args.iodepth} "
                   f"{args.runtime} s: {side['iops']:.0f} IOPS, mean "
                   f"latency {side['lat_ns']['mean'] / 1000:.1f} us")
        print("record.py: " + summary, flush=True)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        proc = None
        props = iothread[len("iothread,id=io1"):]
        header = [f"recorded with {os.path.basename(args.qsd)} "
                  + ("(unpatched 10.2.2 + base-trace-10.2.2.patch)"
                     if args.model_check else "(the series)")
                  + ", iothread io1 "
                  + (props[1:] if props else "defaults")
                  + f", aio={args.aio}, cache.direct=on, NBD over a unix "
                  f"socket", summary]
        if args.model_check:
            convert_model_check(log, args.out, args.max_calls,
                                model_params(args), header)
        else:
            convert(log, args.out, args.skip, args.max_iters, header)
        if args.keep_log:
            shutil.copy(log, args.keep_log)
    finally:
        if proc is not None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


def model_params(args):
    """The IOThread's poll parameters; None means the default"""
    return (32768 if args.poll_max_ns is None else args.poll_max_ns,
            args.poll_grow or 0, args.poll_shrink or 0)


def main():
    p = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n", 1)[1])
    p.add_argument("--qsd", help="qemu-storage-daemon with the series")
    p.add_argument("--convert", metavar="LOG", help="convert LOG only")
    p.add_argument("--out", required=True, help="trace file to write")
    p.add_argument("--fio", default="fio")
    p.add_argument("--rw", default="randread")
    p.add_argument("--bs", default="4k")
    p.add_argument("--iodepth", type=int, default=1)
    p.add_argument("--aio", default="native")
    p.add_argument("--runtime", type=int, default=10)
    p.add_argument("--size-mib", type=int, default=64)
    p.add_argument("--poll-weight", type=int)
    p.add_argument("--poll-max-ns", type=int)
    p.add_argument("--poll-grow", type=int)
    p.add_argument("--poll-shrink", type=int)
    p.add_argument("--model-check", action="store_true",
                   help="record or convert for aio-poll-replay "
                   "--model-check (unpatched 10.2.2 with "
                   "base-trace-10.2.2.patch)")
    p.add_argument("--max-calls", type=int, default=3000,
                   help="--model-check: adjust_polling_time() calls to "
                   "keep at most (default 3000)")
    p.add_argument("--skip", type=int, default=2000,
                   help="iterations to drop at the start (default 2000)")
    p.add_argument("--max-iters", type=int, default=12000,
                   help="iterations to keep at most (default 12000)")
    p.add_argument("--tmp", help="folder for the image (not tmpfs: "
                   "cache.direct=on needs O_DIRECT)")
    p.add_argument("--keep-log", metavar="FILE",
                   help="also keep the raw trace log")
    args = p.parse_args()
    if args.convert and args.model_check:
        convert_model_check(args.convert, args.out, args.max_calls,
                            model_params(args),
                            [f"converted from "
                             f"{os.path.basename(args.convert)}"])
    elif args.convert:
        convert(args.convert, args.out, args.skip, args.max_iters,
                [f"converted from {os.path.basename(args.convert)}"])
    elif args.qsd:
        record(args)
    else:
        p.error("--qsd or --convert is required")


if __name__ == "__main__":
    main()
