#!/usr/bin/python3
"""Run the poll-weight benchmark matrix and write one CSV row per run.

Venues:
  guest     qemu-system-x86_64 (TCG) boots the apw guest; fio runs inside it
            on a virtio-blk disk served by IOThread io1.
  guest8    the same guest with 8 virtio-blk data disks (8 files), all on
            IOThread io1; each fio job spreads its I/O over the 8 disks
            (seeds 000/001: many disks per IOThread).
  guest8x2  the 8 disks split over IOThreads io1 and io2 (even disks on
            io1, odd ones on io2); the IOThread figures are summed over
            both threads.
  nbd    qemu-storage-daemon exports the disk over NBD (unix socket) from
         IOThread io1; fio's nbd engine runs on the host.

Each (venue, round, variant) is one QEMU process that runs every workload
in turn.  Rounds go round-robin over the variants, the order rotated by one
each round, so that drift on the host hits every variant alike.  Round 0 is
the warm-up and is not reported.

CPU is measured only over fio's I/O window (exec_prerun to exec_postrun):
utime+stime of the QEMU process (/proc/PID/stat) and of the IOThread
(/proc/PID/task/TID/stat), plus the IOThread's schedstat run time (ns) and
its voluntary context switches (/proc/PID/task/TID/status): each is one
time the IOThread blocked and was woken, what polling is meant to avoid.
With several IOThreads each figure is the sum over them.

--pin split (guest venues) pins the vCPU thread to the first CPU and the
IOThread(s) to the last one once the guest has booted (thread ids from
QMP query-cpus-fast and query-iothreads), so that the two never queue
behind each other on one core; the main loop and fio's host side float.
--pin swap swaps the two CPUs.  On the machines this project measures on,
the disk's completion interrupts all go to the last CPU and the kernel
counts the time spent in them as CPU time of the thread they interrupt
(results/irq-charge.csv): split puts the IOThreads there, swap keeps
them away from the interrupts.
"""

import argparse
import csv
import glob
import json
import os
import queue
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
import qmpclient  # noqa: E402  (the harness's QMP client: qemu.qmp)

CLK_TCK = os.sysconf("SC_CLK_TCK")

FIELDS = [
    "venue", "workload", "variant", "round", "attempt", "status", "hang",
    "iops", "ios", "lat_mean_us", "lat_p50_us", "lat_p99_us", "window_s",
    "qemu_cpu_ms", "iothread_cpu_ms", "iothread_sched_ms",
    "qemu_cpu_ms_per_kio", "iothread_cpu_ms_per_kio",
    "iothread_sched_ms_per_kio", "iothread_vcsw", "iothread_vcsw_per_kio",
    "iothread_nvcsw", "window_t0", "window_t1", "fio_cpu_ms", "other_cpu_ms",
    "other_window_s", "rate_iops", "props", "binary", "load1",
    "started", "note", "host_steal_ms",
    "vcpu_cpu_ms", "worker_cpu_ms", "main_cpu_ms",
    "vcpu_cpu_ms_per_kio", "worker_cpu_ms_per_kio", "main_cpu_ms_per_kio",
    "vcpu_writes", "worker_writes", "main_writes", "io_writes",
    "vcpu_writes_per_kio", "worker_writes_per_kio", "main_writes_per_kio",
    "io_writes_per_kio", "vcpu_nvcsw", "vcpu_nvcsw_per_kio",
]

# The guest's threads by name (-name debug-threads=on), whose CPU over the
# window (schedstat run time) each row gives per group: the vCPUs ("CPU
# 0/TCG"), the thread pool's workers (aio=threads) and the main loop (the
# process's first thread).  The IOThreads are measured on their own
# (iothread_*).
THREAD_GROUPS = (("vcpu", "CPU "), ("io", "IO "), ("worker", "worker"))

# Syscalls an idle event-loop thread blocks in: io_uring_enter, ppoll,
# poll, epoll_wait, epoll_pwait, epoll_pwait2.
EVENT_LOOP_SYSCALLS = {"426", "271", "7", "232", "281", "441"}


def log(msg):
    print(msg, flush=True)


# --------------------------------------------------------------- variants

class Variant:
    """LABEL=BINDIR[:PROPS]; PROPS is what follows 'iothread,id=io1,'."""

    def __init__(self, spec):
        try:
            label, rest = spec.split("=", 1)
        except ValueError:
            raise SystemExit("run.py: bad variant '%s' (LABEL=BINDIR[:PROPS])" % spec)
        bindir, _, props = rest.partition(":")
        self.label, self.bindir, self.props = label, bindir, props
        self.weight = None
        for p in props.split(","):
            k, _, v = p.partition("=")
            if k == "poll-weight":
                self.weight = int(v)

    @property
    def system(self):
        return os.path.join(self.bindir, "qemu-system-x86_64")

    @property
    def qsd(self):
        return os.path.join(self.bindir, "storage-daemon/qemu-storage-daemon")

    def iothread(self, ident="io1"):
        return "iothread,id=" + ident + ("," + self.props if self.props else "")


# ----------------------------------------------------------------- venues

# guest venue -> (data disks, IOThreads)
GUEST_VENUES = {"guest": (1, 1), "guest8": (8, 1), "guest8x2": (8, 2)}
VENUES = list(GUEST_VENUES) + ["nbd"]


def is_guest(venue):
    return venue in GUEST_VENUES


def guest_disks(venue):
    return GUEST_VENUES[venue][0]


def guest_iothreads(venue):
    return GUEST_VENUES[venue][1]


def guest_devname(i):
    return "/dev/vd" + "abcdefghijklmnopqrstuvwxyz"[i]


def disk_iothread(i, n_iothreads):
    """The IOThread of data disk i: round-robin, so even disks on io1 and
    odd ones on io2 when there are two."""
    return "io%d" % (1 + i % n_iothreads)


# -------------------------------------------------------------- workloads

# Seed 001's job mix scaled to 2 cores: 8k, iodepth 8, numjobs 1 and 4.
MIX_RW = ("randread", "randwrite", "read", "write")
MIX_NUMJOBS = (1, 4)
# numjobs of the multi-disk venues' saturating and rate-limited jobs
MULTI_NUMJOBS = 4


def workload_list(a, multi=False):
    """[(name, [fio args], rate_iops or None)] for a plan; multi is a venue
    with several disks (the jobs there use numjobs 4, one file list over
    every disk); the rate of the rate-limited job is filled in per venue."""
    w = []
    names = set()

    def add(name, args, rate=None):
        if name not in names:
            names.add(name)
            w.append((name, args, rate))

    sel = a.workloads.split(",")
    nj = MULTI_NUMJOBS if multi else 1
    sfx = "-j%d" % nj if nj > 1 else ""
    if "sat" in sel:
        add("randread-8k-qd8" + sfx, ["--rw=randread", "--bs=8k",
                                      "--iodepth=8", "--numjobs=%d" % nj])
    if "rate" in sel:
        add("randread-8k-qd1%s-rate" % sfx, ["--rw=randread", "--bs=8k",
                                             "--iodepth=1",
                                             "--numjobs=%d" % nj], "rate")
    if "mix" in sel:
        for rw in MIX_RW:
            for n in MIX_NUMJOBS:
                add("%s-8k-qd8%s" % (rw, "-j%d" % n if n > 1 else ""),
                    ["--rw=" + rw, "--bs=8k", "--iodepth=8",
                     "--numjobs=%d" % n])
    if a.full_matrix:
        for rw in ("randread", "read", "randwrite", "write"):
            for bs in ("8k", "128k"):
                for nj in (1, 4, 8, 16):
                    name = "%s-%s-qd8%s" % (rw, bs, "" if nj == 1 else "-j%d" % nj)
                    add(name, ["--rw=" + rw, "--bs=" + bs, "--iodepth=8",
                               "--numjobs=%d" % nj])
    return w


def common_fio_args(a):
    return ["--direct=1", "--time_based=1", "--runtime=%d" % a.runtime,
            "--group_reporting=1", "--lat_percentiles=1",
            "--norandommap=1"]


def numjobs_of(args):
    n = 1
    for x in args:
        if x.startswith("--numjobs="):
            n = int(x.split("=", 1)[1])
    return n


def venue_jobs(a, venue):
    """The jobs of one venue: {"name", "args", "rate"}.  The rate is the
    total; fio's --rate_iops is per job, so it gets rate/numjobs.  In a
    multi-disk guest every job names the disks after the first one:
    init.sh passes --filename=/dev/vda before the job's options, and fio
    adds a second --filename's files to the first's, so each job opens
    all of /dev/vda../dev/vdh (round-robin over them, fio's default)."""
    rate = a.rate_iops_guest if is_guest(venue) else a.rate_iops_nbd
    ndisks = guest_disks(venue) if is_guest(venue) else 1
    jobs = []
    for name, args, r in workload_list(a, multi=ndisks > 1):
        args = list(args)
        if ndisks > 1:
            args.append("--filename=" + ":".join(
                guest_devname(i) for i in range(1, ndisks)))
        if r == "rate":
            r = rate
            args.append("--rate_iops=%d" % max(1, r // numjobs_of(args)))
        # The extra options come last, so that they win.
        jobs.append({"name": name, "args": common_fio_args(a) + args + a.fio_args.split(),
                     "rate": r or ""})
    return jobs


# ------------------------------------------------------- measurement bits

def stat_ticks(text):
    """utime+stime in clock ticks from a /proc/.../stat line."""
    f = text[text.rindex(")") + 2:].split()
    return int(f[11]) + int(f[12])


def others_ticks():
    """utime+stime+cutime+cstime summed over every process but this runner
    and its descendants (QEMU, fio): the CPU that other jobs used.  A
    short-lived process (a compiler) shows up in its parent's cutime once
    reaped, so builds are seen too."""
    me = os.getpid()
    procs = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                text = f.read()
        except OSError:
            continue
        f = text[text.rindex(")") + 2:].split()
        procs[int(d)] = (int(f[1]), sum(int(x) for x in f[11:15]))
    kids = {}
    for pid, (ppid, _) in procs.items():
        kids.setdefault(ppid, []).append(pid)
    mine, todo = set(), [me]
    while todo:
        p = todo.pop()
        if p not in mine:
            mine.add(p)
            todo += kids.get(p, [])
    return sum(t for pid, (_, t) in procs.items() if pid not in mine)


def thread_group(pid, tid, comm):
    """The group of THREAD_GROUPS that thread tid of process pid, named
    comm, belongs to: "main" for the process's first thread, "other" for
    what no group names (QEMU's RCU thread, the wakeup tracer)"""
    if tid == pid:
        return "main"
    for group, prefix in THREAD_GROUPS:
        if comm.startswith(prefix):
            return group
    return "other"


def syscw(text):
    """The write system calls counted in a /proc/.../io file"""
    for line in text.splitlines():
        k, _, v = line.partition(":")
        if k == "syscw":
            return int(v)
    raise ValueError("no syscw")


def task_times(pid):
    """{tid: (group, run time in ns, write system calls, involuntary
    context switches)} of every thread of pid now: schedstat (ns, where
    utime+stime count 10 ms ticks, a few per window for a pool worker),
    io's syscw (a vCPU's writes are mostly the eventfd writes of its
    guest's virtqueue kicks, a worker's those of aio_notify()) and
    status's nonvoluntary_ctxt_switches (a vCPU's: the times another
    thread took its CPU)"""
    out = {}
    for path in glob.glob("/proc/%d/task/*/schedstat" % pid):
        tid = int(path.split("/")[4])
        d = os.path.dirname(path)
        try:
            with open(path) as f:
                ns = int(f.read().split()[0])
            with open(os.path.join(d, "comm")) as f:
                comm = f.read().rstrip("\n")
            with open(os.path.join(d, "io")) as f:
                writes = syscw(f.read())
            with open(os.path.join(d, "status")) as f:
                nvcsw = ctxt_switches(f.read().splitlines())["nvcsw"]
        except (OSError, IndexError, ValueError, KeyError):
            continue        # it ended while we looked
        out[tid] = (thread_group(pid, tid, comm), ns, writes, nvcsw)
    return out


def group_times(t0, t1, field=1):
    """{group: sum} of what each group's threads added to a field of two
    task_times snapshots (1: ns run, 2: writes, 3: involuntary context
    switches): a thread that started in
    between counts from 0; one that ended in between is not counted (pool
    workers end after 10 s idle; the process's own total, qemu_cpu_ms,
    keeps their time)"""
    out = {}
    for tid, now in t1.items():
        group = now[0]
        before = t0[tid][field] if tid in t0 and t0[tid][0] == group else 0
        out[group] = out.get(group, 0) + now[field] - before
    return out


def snapshot(pid, tids):
    """The process's CPU and, summed over the IOThreads tids (one tid or a
    list), their CPU, schedstat run time and context switches."""
    if isinstance(tids, int):
        tids = [tids]
    with open("/proc/%d/stat" % pid) as f:
        q = stat_ticks(f.read())
    i = s = 0
    cs = {}
    for tid in tids:
        with open("/proc/%d/task/%d/stat" % (pid, tid)) as f:
            i += stat_ticks(f.read())
        with open("/proc/%d/task/%d/schedstat" % (pid, tid)) as f:
            s += int(f.read().split()[0])
        with open("/proc/%d/task/%d/status" % (pid, tid)) as f:
            for k, v in ctxt_switches(f.read().splitlines()).items():
                cs[k] = cs.get(k, 0) + v
    with open("/proc/stat") as f:
        steal = steal_ticks(f.read().splitlines())
    snap = dict(cs, t=time.monotonic(), qemu=q, io=i, sched=s,
                others=others_ticks(), tasks=task_times(pid))
    if steal is not None:
        snap["steal"] = steal
    return snap


def steal_ticks(lines):
    """The steal time of all CPUs, in clock ticks, from the lines of
    /proc/stat: the time the hypervisor ran something else while this
    machine's CPUs had work (on the project's virtual machines 20-3900 ms
    per 4 s window of the two CPUs, results/evidence-2026-12-03/, and a
    spinning thread's CPU clock counts some of it); None without the
    line"""
    for line in lines:
        w = line.split()
        if w and w[0] == "cpu" and len(w) > 8:
            return int(w[8])
    return None


def ctxt_switches(lines):
    """{"vcsw": N, "nvcsw": N} from the lines of a /proc status file."""
    out = {}
    for line in lines:
        k, _, v = line.partition(":")
        if k == "voluntary_ctxt_switches":
            out["vcsw"] = int(v)
        elif k == "nonvoluntary_ctxt_switches":
            out["nvcsw"] = int(v)
    return out


def parse_cat_snapshot(text):
    """The output of 'cat /proc/uptime PID/stat TID/stat TID/schedstat
    [TID/status [/proc/stat]]'.  /proc/uptime counts like CLOCK_MONOTONIC
    here (no suspend), in 10 ms steps."""
    lines = text.splitlines()
    snap = dict(ctxt_switches(lines[4:]),
                t=float(lines[0].split()[0]), qemu=stat_ticks(lines[1]),
                io=stat_ticks(lines[2]), sched=int(lines[3].split()[0]))
    steal = steal_ticks(lines[4:])
    if steal is not None:
        snap["steal"] = steal
    return snap


def window_metrics(s0, s1):
    m = {
        "window_s": round(s1["t"] - s0["t"], 3),
        "qemu_cpu_ms": (s1["qemu"] - s0["qemu"]) * 1000.0 / CLK_TCK,
        "iothread_cpu_ms": (s1["io"] - s0["io"]) * 1000.0 / CLK_TCK,
        "iothread_sched_ms": (s1["sched"] - s0["sched"]) / 1e6,
        "window_t0": round(s0["t"], 3),
        "window_t1": round(s1["t"], 3),
    }
    for k in ("vcsw", "nvcsw"):
        if k in s0 and k in s1:
            m["iothread_" + k] = s1[k] - s0[k]
    if "steal" in s0 and "steal" in s1:
        m["host_steal_ms"] = round((s1["steal"] - s0["steal"]) * 1000.0 /
                                   CLK_TCK, 1)
    if "tasks" in s0 and "tasks" in s1:
        g = group_times(s0["tasks"], s1["tasks"])
        w = group_times(s0["tasks"], s1["tasks"], 2)
        for group in ("vcpu", "worker", "main"):
            m[group + "_cpu_ms"] = g.get(group, 0) / 1e6
        for group in ("vcpu", "worker", "main", "io"):
            m[group + "_writes"] = w.get(group, 0)
        m["vcpu_nvcsw"] = group_times(s0["tasks"], s1["tasks"], 3).get(
            "vcpu", 0)
    return m


def others_metrics(t0, o0, t1, o1):
    return {"other_cpu_ms": (o1 - o0) * 1000.0 / CLK_TCK,
            "other_window_s": round(t1 - t0, 3)}


def fio_metrics(d):
    j = d["jobs"][0]
    dirs = [j[k] for k in ("read", "write", "trim") if j[k]["total_ios"]]
    ios = sum(x["total_ios"] for x in dirs)
    if not ios:
        raise ValueError("fio did no I/O")
    main = max(dirs, key=lambda x: x["total_ios"])
    pct = main["lat_ns"].get("percentile", {})
    # fio's CPU: per-clone percentages of summed run times, so this is the
    # sum over the clones.  It matters only where fio runs on the host.
    fio_cpu = (j.get("usr_cpu", 0) + j.get("sys_cpu", 0)) / 100.0 \
        * j.get("job_runtime", 0)
    return {
        "fio_cpu_ms": round(fio_cpu, 1),
        "ios": ios,
        "iops": round(sum(x["iops"] for x in dirs), 1),
        "lat_mean_us": round(sum(x["lat_ns"]["mean"] * x["total_ios"]
                                 for x in dirs) / ios / 1000.0, 1),
        "lat_p50_us": round(pct.get("50.000000", 0) / 1000.0, 1),
        "lat_p99_us": round(pct.get("99.000000", 0) / 1000.0, 1),
    }


def finish_row(row):
    """Round, and add the per-1000-I/O figures."""
    kio = row.get("ios", 0) / 1000.0
    if "other_cpu_ms" in row:
        row["other_cpu_ms"] = round(row["other_cpu_ms"], 1)
    for k in ("qemu_cpu_ms", "iothread_cpu_ms", "iothread_sched_ms",
              "vcpu_cpu_ms", "worker_cpu_ms", "main_cpu_ms"):
        if k in row:
            row[k] = round(row[k], 1)
            if kio:
                row[k + "_per_kio"] = round(row[k] / kio, 4)
    if kio and "iothread_vcsw" in row:
        row["iothread_vcsw_per_kio"] = round(row["iothread_vcsw"] / kio, 2)
    for k in ("vcpu_writes", "worker_writes", "main_writes", "io_writes",
              "vcpu_nvcsw"):
        if kio and k in row:
            row[k + "_per_kio"] = round(row[k] / kio, 2)
    return row


def parse_json_text(text):
    i = text.find("{")
    if i < 0:
        raise ValueError("no JSON in fio output")
    return json.JSONDecoder().raw_decode(text[i:])[0]


def trace_args(a, rundir, opt):
    """QEMU's trace options (@opt: -trace or --trace): for --iter-trace,
    the trace events of harness/replay/iter_trace.py in
    rundir/iter-trace.log (a build with that instrument is needed); for
    --trace-events PATTERN, QEMU's trace events PATTERN in rundir/trace.log
    (one trace file per QEMU, so not both)."""
    if a.iter_trace:
        return [opt, "enable=aio_poll_*,file=" +
                os.path.join(rundir, "iter-trace.log")]
    if a.trace_events:
        return [opt, "enable=%s,file=%s" %
                (a.trace_events, os.path.join(rundir, "trace.log"))]
    return []


# ------------------------------------------------- --sched-wakeups

TRACEFS = "/sys/kernel/tracing"


class SchedWakeups:
    """--sched-wakeups: the kernel's sched_waking events of the IOThreads,
    with the CLOCK_MONOTONIC of the iteration trace (trace_clock mono).
    The event that ends a wait that slept wakes the thread: a completion's
    interrupt, a vCPU's eventfd write, fio's request on the socket; its
    sched_waking is that event's time, which the iteration trace cannot
    see (complete.py --wakeups joins the two).  One run at a time: the
    tracing instance is the system's."""

    def __init__(self, a, rundir):
        self.on = bool(getattr(a, "sched_wakeups", False))
        self.path = os.path.join(rundir, "sched-wakeups.txt")
        self.started = False

    def _w(self, name, text):
        with open(os.path.join(TRACEFS, name), "w") as f:
            f.write(text)

    def start(self, tids):
        if not self.on or self.started:
            return
        if not os.path.isdir(os.path.join(TRACEFS, "events")):
            subprocess.run(["mount", "-t", "tracefs", "nodev", TRACEFS],
                           check=False, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        ev = "events/sched/sched_waking/"
        try:
            self._w("tracing_on", "0")
            self._w(ev + "enable", "0")
            self._w("trace_clock", "mono")
            self._w("buffer_size_kb", "32768")
            self._w(ev + "filter",
                    " || ".join("pid == %d" % t for t in tids))
            self._w("trace", "")
            self._w(ev + "enable", "1")
            self._w("tracing_on", "1")
        except OSError as e:
            raise RuntimeError("--sched-wakeups: cannot trace sched_waking "
                               "through %s (root and tracefs needed): %s" %
                               (TRACEFS, e))
        self.started = True

    def stop(self):
        """stop and write the events, with each CPU buffer's overrun (lost
        events) in a header line; a no-op unless started"""
        if not self.started:
            return
        self.started = False
        ev = "events/sched/sched_waking/"
        self._w("tracing_on", "0")
        self._w(ev + "enable", "0")
        lost = 0
        for st in glob.glob(os.path.join(TRACEFS, "per_cpu/cpu*/stats")):
            with open(st) as f:
                for line in f:
                    if line.startswith("overrun:"):
                        lost += int(line.split()[1])
        with open(os.path.join(TRACEFS, "trace")) as src, \
                open(self.path, "w") as dst:
            dst.write("# apw sched-wakeups: clock mono, overrun %d\n" % lost)
            for line in src:
                if "sched_waking:" in line:
                    dst.write(line)
        self._w(ev + "filter", "0")
        self._w("trace", "")
        self._w("buffer_size_kb", "1408")


def load1():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def kill_proc(p):
    if p.poll() is None:
        p.kill()
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


# ------------------------------------------------------------------- QMP

# The tree whose python/qemu/qmp the runner speaks QMP with (--qemu-src);
# see harness/lib/qmpclient.py.
QEMU_SRC = None


def qmp(path, commands, timeout=5.0):
    """Run QMP commands [(name, args)], return [(name, args, reply)]."""
    return qmpclient.run_commands(QEMU_SRC, path, commands, timeout)


def dump_device_state(qmp_path, out_path):
    """Save what QMP tells about the IOThread, the virtio-blk queues and
    the interrupt controllers, then ask the guest kernel (magic SysRq on
    the PS/2 keyboard) for its blocked and all tasks: that lands in
    console.log, which the reader thread is still writing."""
    res = []
    try:
        res = qmp(qmp_path, [("query-status", None), ("query-iothreads", None),
                             ("x-query-virtio", None)])
        devs = res[-1][2].get("return", [])
        cmds = []
        for d in devs:
            cmds.append(("x-query-virtio-status", {"path": d["path"]}))
            cmds.append(("x-query-virtio-queue-status",
                         {"path": d["path"], "queue": 0}))
            cmds.append(("x-query-virtio-queue-element",
                         {"path": d["path"], "queue": 0}))
        for hmp in ("info pic", "info irq", "info lapic", "info registers"):
            cmds.append(("human-monitor-command", {"command-line": hmp}))
        res += qmp(qmp_path, cmds)
        # 8 first: the console's log level is 1, and the task dumps are
        # printed at KERN_INFO after SysRq restored it.
        for key, wait in (("8", 0.5), ("w", 3), ("t", 6)):
            res += qmp(qmp_path, [("send-key", {"keys": [
                {"type": "qcode", "data": k} for k in ("alt", "sysrq", key)]})])
            time.sleep(wait)
    except Exception as e:
        res.append(("error", None, {"exception": str(e)}))
    with open(out_path, "w") as f:
        json.dump([{"command": c, "arguments": a, "reply": r}
                   for c, a, r in res], f, indent=1)


def dump_threads(pids, path):
    """comm, state, syscall, wchan and kernel stack of every thread of
    the given processes and their children (fio's job processes)."""
    out = []
    todo, seen = list(pids), set()
    while todo:
        pid = todo.pop(0)
        if pid in seen:
            continue
        seen.add(pid)
        for task in sorted(glob.glob("/proc/%d/task/*" % pid)):
            out.append("== %s" % task)
            for f in ("comm", "stat", "syscall", "wchan", "stack"):
                try:
                    with open(os.path.join(task, f)) as fh:
                        out.append("%s: %s" % (f, fh.read().strip()))
                except OSError as e:
                    out.append("%s: (%s)" % (f, e.strerror))
            try:
                with open(os.path.join(task, "children")) as fh:
                    todo += [int(c) for c in fh.read().split()]
            except OSError:
                pass
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


# ------------------------------------------------------------ guest venue

def find_thread_by_comm(pid, comm):
    for path in glob.glob("/proc/%d/task/*/comm" % pid):
        try:
            with open(path) as f:
                if f.read().strip() == comm:
                    return int(path.split("/")[4])
        except OSError:
            pass
    return None


def io_uring_state():
    """The host's kernel.io_uring_disabled, which decides whether QEMU's
    AioContexts watch their fds with io_uring (fdmon-io_uring) or fall
    back to ppoll()/epoll (a QEMU that gets no io_uring says nothing)."""
    try:
        with open("/proc/sys/kernel/io_uring_disabled") as f:
            v = f.read().strip()
    except OSError:
        return "kernel.io_uring_disabled not readable"
    what = {"0": "QEMU watches fds with io_uring",
            "1": "io_uring for root and io_uring_group only",
            "2": "no io_uring: QEMU falls back to ppoll()/epoll"}
    return "kernel.io_uring_disabled=%s (%s)" % (v, what.get(v, "?"))


def file_opts(a):
    """The data disks' file options: aio= and the cache mode.  With
    --cache page the host's page cache serves the reads (cache.direct=off,
    the files read in beforehand: read_in()), so that a request completes
    in microseconds, the case where polling can save a wakeup's latency."""
    return "aio=%s,cache.direct=%s" % (
        a.aio, "off" if a.cache == "page" else "on")


def read_in(paths):
    """Read @paths through the page cache once (--cache page), so that the
    runs find them there; returns the MiB read."""
    total = 0
    for path in paths:
        with open(path, "rb") as f:
            while True:
                b = f.read(1 << 20)
                if not b:
                    break
                total += len(b)
    return total >> 20


def guest_disk_args(a, venue):
    """-object iothread and -blockdev/-device of a guest venue's IOThreads
    and data disks (files, file_opts())."""
    ndisks, nio = GUEST_VENUES[venue]
    files = [a.disk] if ndisks == 1 else a.disks
    if len(files) < ndisks:
        raise SystemExit("run.py: venue %s needs %d disk files (--disks), "
                         "got %d" % (venue, ndisks, len(files)))
    return files[:ndisks], nio


class GuestBoot:
    """One boot of the guest running a list of jobs."""

    def __init__(self, a, variant, jobs, rundir, sockdir, venue="guest"):
        self.a, self.v, self.jobs, self.rundir = a, variant, jobs, rundir
        self.venue = venue
        self.qmp_path = os.path.join(sockdir, "qmp.sock")
        self.lines = queue.Queue()
        self.snaps = {}    # job -> {"start": snap, "end": snap}
        self.tid = None    # the IOThreads' thread ids, a list once known
        self.proc = None
        self.hung_phase = None
        self.wakeups = SchedWakeups(a, rundir)

    def cmdline(self):
        a, v = self.a, self.v
        jobfile = os.path.join(self.rundir, "jobs.txt")
        with open(jobfile, "w") as f:
            for j in self.jobs:
                f.write("%s %s\n" % (j["name"], " ".join(j["args"] + ["--ioengine=libaio"])))
        return [
            v.system, "-M", "pc", "-accel", "tcg", "-m", "1024",
            "-nodefaults", "-no-user-config", "-display", "none",
            "-no-reboot", "-name", "guest,debug-threads=on",
            "-L", os.path.join(v.bindir, "pc-bios/optionrom"),
            "-L", a.bios_dir,
            "-kernel", a.kernel, "-initrd", a.initrd,
            "-append", "console=ttyS0 quiet loglevel=1 panic=-1 mitigations=off "
                       "sysrq_always_enabled",
            "-chardev", "stdio,id=ser0,signal=off", "-serial", "chardev:ser0",
            "-qmp", "unix:%s,server=on,wait=off" % self.qmp_path,
            "-fw_cfg", "name=opt/apw/jobs,file=" + jobfile,
        ] + self.disk_args() + trace_args(a, self.rundir, "-trace")

    def disk_args(self):
        files, nio = guest_disk_args(self.a, self.venue)
        out = []
        for k in range(nio):
            out += ["-object", self.v.iothread("io%d" % (k + 1))]
        for i, path in enumerate(files):
            out += ["-blockdev", "driver=file,node-name=d%d,filename=%s,%s" % (
                        i, path, file_opts(self.a)),
                    "-device", "virtio-blk-pci,drive=d%d,iothread=%s" % (
                        i, disk_iothread(i, nio))]
        return out

    def iothread_names(self):
        return ["io%d" % (k + 1) for k in range(guest_iothreads(self.venue))]

    def tids_by_comm(self):
        tids = [find_thread_by_comm(self.proc.pid, "IO " + n)
                for n in self.iothread_names()]
        return tids if all(tids) else None

    def reader(self, console):
        for raw in self.proc.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            console.write(line + "\n")
            w = line.split()
            if len(w) >= 2 and w[0] in ("APW-FIO-START", "APW-FIO-END"):
                # Snapshot here, in the reader, as close to the marker as
                # we can.  First START and last END make the window.
                try:
                    if self.tid is None:
                        self.tid = self.tids_by_comm()
                    s = snapshot(self.proc.pid, self.tid)
                    d = self.snaps.setdefault(w[1], {})
                    if w[0] == "APW-FIO-END" or "start" not in d:
                        d["start" if w[0] == "APW-FIO-START" else "end"] = s
                except (OSError, TypeError, ValueError) as e:
                    self.lines.put("APW-HOST-ERROR snapshot: %s" % e)
            self.lines.put(line)
        self.lines.put(None)

    def run(self):
        """Returns (rows for finished jobs, index of the hung job or None).
        Raises RuntimeError on a failure that is not a hang."""
        a = self.a
        cmd = self.cmdline()
        with open(os.path.join(self.rundir, "cmdline.txt"), "w") as f:
            f.write(" ".join(shlex.quote(c) for c in cmd) + "\n")
        console = open(os.path.join(self.rundir, "console.log"), "w")
        stderr = open(os.path.join(self.rundir, "qemu.stderr"), "w")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=stderr)
        t = threading.Thread(target=self.reader, args=(console,), daemon=True)
        t.start()
        rows, idx, phase = [], 0, "boot"
        json_lines, collecting = [], None
        deadline = time.monotonic() + a.watchdog
        hung = None
        try:
            while True:
                left = deadline - time.monotonic()
                try:
                    line = self.lines.get(timeout=max(left, 0.01))
                except queue.Empty:
                    hung = idx
                    self.hung_phase = phase if phase != "jobs" else "fio job"
                    break
                if line is None:
                    if phase == "done":
                        break
                    raise RuntimeError("QEMU exited during %s: %s" % (
                        phase, tail(os.path.join(self.rundir, "qemu.stderr"))
                        or tail(os.path.join(self.rundir, "console.log"))))
                w = line.split()
                if not w:
                    if collecting:
                        json_lines.append(line)
                    continue
                if w[0] == "APW-ERROR" or w[0] == "APW-HOST-ERROR":
                    raise RuntimeError(line)
                if w[0] == "APW-BOOTED":
                    phase = "jobs"
                    self.check_iothread()
                    deadline = time.monotonic() + a.runtime + a.watchdog
                elif w[0] == "APW-JOB":
                    deadline = time.monotonic() + a.runtime + a.watchdog
                elif w[0] == "APW-JSON-BEGIN":
                    collecting, json_lines = w[1], []
                elif w[0] == "APW-JSON-END":
                    job = self.jobs[idx]
                    assert w[1] == job["name"], (w, job)
                    rows.append(self.job_row(job, "\n".join(json_lines)))
                    collecting, idx = None, idx + 1
                    deadline = time.monotonic() + a.runtime + a.watchdog
                elif w[0] == "APW-DONE":
                    phase = "done"
                    deadline = time.monotonic() + 30
                elif collecting:
                    json_lines.append(line)
        finally:
            if hung is not None:
                dump_device_state(self.qmp_path, os.path.join(
                    self.rundir, "hang-state.json"))
            kill_proc(self.proc)
            self.wakeups.stop()
            t.join(timeout=5)
            console.close()
            stderr.close()
        return rows, hung

    def check_iothread(self):
        """Find the IOThreads by name ('IO io1' with debug-threads=on) and
        check them against QMP's query-iothreads, before any window opens;
        with --pin split or swap, pin the vCPU and the IOThreads apart."""
        names = self.iothread_names()
        vcpus = []
        try:
            res = qmp(self.qmp_path, [("query-iothreads", None),
                                      ("query-cpus-fast", None)])
            r = res[0][2]
            # what the run had in effect: poll parameters, thread id
            with open(os.path.join(self.rundir, "query-iothreads.json"),
                      "w") as f:
                json.dump(r, f, indent=1)
            ids = {t["id"]: t["thread-id"] for t in r["return"]}
            by_qmp = [ids[n] for n in names]
            vcpus = [c["thread-id"] for c in res[1][2].get("return", [])]
        except (OSError, ValueError, KeyError, IndexError,
                qmpclient.QMPFailure) as e:
            log("warning: QMP query-iothreads failed (%r); IOThreads found "
                "by their thread names only" % e)
            by_qmp = None
        tids = []
        for k, n in enumerate(names):
            by_name = find_thread_by_comm(self.proc.pid, "IO " + n)
            q = by_qmp[k] if by_qmp else None
            if by_name and q and by_name != q:
                raise RuntimeError("IOThread %s: thread 'IO %s' is %d, QMP "
                                   "says %d" % (n, n, by_name, q))
            if not (by_name or q):
                raise RuntimeError("cannot find IOThread %s's thread" % n)
            tids.append(by_name or q)
        self.tid = tids
        self.wakeups.start(tids)
        if self.a.pin != "none":
            pin_threads(vcpus, tids, os.path.join(self.rundir, "pin.json"),
                        self.a.pin == "swap")

    def job_row(self, job, text):
        with open(os.path.join(self.rundir, job["name"] + ".json"), "w") as f:
            f.write(text + "\n")
        row = {"tid": self.tid}
        try:
            row.update(fio_metrics(parse_json_text(text)))
            del row["fio_cpu_ms"]   # the guest's CPU, part of QEMU's here
            s = self.snaps.get(job["name"], {})
            row.update(window_metrics(s["start"], s["end"]))
            row.update(others_metrics(s["start"]["t"], s["start"]["others"],
                                      s["end"]["t"], s["end"]["others"]))
            row["status"] = "ok"
        except (ValueError, KeyError) as e:
            row["status"] = "error"
            row["note"] = "%s: %s" % (type(e).__name__, e)
        return row


def pin_plan(vcpus, iothreads, cpus, swap=False):
    """{tid: cpu}: the vCPU threads on the first CPU, the IOThreads on the
    last one; with @swap, the other way round."""
    cpus = sorted(cpus)
    if len(cpus) < 2:
        return {}
    first, last = (cpus[-1], cpus[0]) if swap else (cpus[0], cpus[-1])
    plan = {t: first for t in vcpus}
    plan.update({t: last for t in iothreads})
    return plan


def pin_threads(vcpus, iothreads, record, swap=False):
    if not vcpus:
        raise RuntimeError("--pin: QMP query-cpus-fast gave no vCPU thread")
    plan = pin_plan(vcpus, iothreads, os.sched_getaffinity(0), swap)
    for tid, cpu in plan.items():
        os.sched_setaffinity(tid, {cpu})
    with open(record, "w") as f:
        json.dump({"vcpu": vcpus, "iothreads": iothreads,
                   "cpu_of_tid": {str(t): c for t, c in plan.items()}}, f)


def tail(path, n=5):
    try:
        with open(path, errors="replace") as f:
            return " | ".join(f.read().strip().splitlines()[-n:])
    except OSError:
        return ""


# -------------------------------------------------------------- nbd venue

class NbdDaemon:
    """qemu-storage-daemon exporting the disk from IOThread io1."""

    def __init__(self, a, variant, rundir, sockdir):
        self.a, self.v, self.rundir = a, variant, rundir
        self.sock = os.path.join(sockdir, "nbd.sock")
        self.pidfile = os.path.join(sockdir, "qsd.pid")
        self.proc = None
        self.tid = None
        self.wakeups = SchedWakeups(a, rundir)

    def start(self):
        a, v = self.a, self.v
        for p in (self.sock, self.pidfile):
            if os.path.exists(p):
                os.unlink(p)
        cmd = [
            v.qsd,
            "--blockdev", "driver=file,node-name=d0,filename=%s,%s" % (
                a.disk, file_opts(a)),
            "--object", v.iothread(),
            "--nbd-server", "addr.type=unix,addr.path=" + self.sock,
            "--export", "type=nbd,id=e0,node-name=d0,name=d0,writable=on,"
                        "iothread=io1",
            "--pidfile", self.pidfile,
        ] + trace_args(a, self.rundir, "--trace")
        with open(os.path.join(self.rundir, "cmdline.txt"), "w") as f:
            f.write(" ".join(shlex.quote(c) for c in cmd) + "\n")
        self.err = open(os.path.join(self.rundir, "qsd.log"), "w")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                     stdout=self.err, stderr=self.err)
        deadline = time.monotonic() + 20
        while not (os.path.exists(self.sock) and os.path.exists(self.pidfile)):
            if self.proc.poll() is not None:
                self.err.flush()
                raise RuntimeError("qemu-storage-daemon exited: " + tail(
                    os.path.join(self.rundir, "qsd.log")))
            if time.monotonic() > deadline:
                raise RuntimeError("qemu-storage-daemon did not come up")
            time.sleep(0.05)
        self.tid = self.find_iothread()
        self.wakeups.start([self.tid])

    def find_iothread(self):
        """qemu-storage-daemon names all its threads alike.  The idle
        IOThread is the one non-main thread blocked in an event-loop
        syscall (io_uring_enter with fdmon-io_uring); the RCU thread and
        pool workers wait in futex.  Ask until exactly one qualifies."""
        pid = self.proc.pid
        seen = {}
        for _ in range(100):
            cands = []
            for path in glob.glob("/proc/%d/task/*/syscall" % pid):
                tid = int(path.split("/")[4])
                if tid == pid:
                    continue
                try:
                    with open(path) as f:
                        nr = f.read().split()[0]
                except (OSError, IndexError):
                    continue
                seen[tid] = nr
                if nr in EVENT_LOOP_SYSCALLS:
                    cands.append(tid)
            if len(cands) == 1:
                return cands[0]
            time.sleep(0.05)
        raise RuntimeError("cannot tell the IOThread of qemu-storage-daemon "
                           "(threads and syscalls: %s)" % seen)

    def run_job(self, job, jobdir):
        a, pid, tid = self.a, self.proc.pid, self.tid
        files = "/proc/uptime /proc/%d/stat /proc/%d/task/%d/stat " \
                "/proc/%d/task/%d/schedstat /proc/%d/task/%d/status " \
                "/proc/stat" % (
                    pid, pid, tid, pid, tid, pid, tid)
        snap = "sh -c 'cat %s > %s/%%s.$$'" % (files, jobdir)
        cmd = ["fio", "--output-format=json", "--output=" + os.path.join(jobdir, "fio.json"),
               "--name=" + job["name"], "--ioengine=nbd",
               "--uri=nbd+unix:///d0?socket=" + self.sock,
               "--exec_prerun=" + snap % "start", "--exec_postrun=" + snap % "end",
               ] + job["args"]
        with open(os.path.join(jobdir, "cmdline.txt"), "w") as f:
            f.write(" ".join(shlex.quote(c) for c in cmd) + "\n")
        with open(os.path.join(jobdir, "fio.log"), "w") as log_f:
            t0, o0 = time.monotonic(), others_ticks()
            p = subprocess.Popen(cmd, cwd=jobdir, stdin=subprocess.DEVNULL,
                                 stdout=log_f, stderr=log_f)
            try:
                rc = p.wait(timeout=a.runtime + a.watchdog)
                t1, o1 = time.monotonic(), others_ticks()
            except subprocess.TimeoutExpired:
                dump_threads([pid, p.pid], os.path.join(jobdir, "hang-threads.txt"))
                kill_proc(p)
                return {"status": "hang", "hang": 1,
                        "note": "fio ran past %d s; threads in %s" % (
                            a.runtime + a.watchdog,
                            os.path.relpath(os.path.join(jobdir, "hang-threads.txt"),
                                            a.out))}
        row = {"tid": tid}
        try:
            if rc != 0:
                raise ValueError("fio rc=%d: %s" % (rc, tail(os.path.join(jobdir, "fio.log"))))
            with open(os.path.join(jobdir, "fio.json")) as f:
                row.update(fio_metrics(parse_json_text(f.read())))
            starts, ends = [], []
            for path in glob.glob(os.path.join(jobdir, "start.*")):
                with open(path) as f:
                    starts.append(parse_cat_snapshot(f.read()))
            for path in glob.glob(os.path.join(jobdir, "end.*")):
                with open(path) as f:
                    ends.append(parse_cat_snapshot(f.read()))
            if not starts or not ends:
                raise ValueError("fio ran no exec_prerun/exec_postrun")
            s0 = min(starts, key=lambda s: (s["t"], s["qemu"]))
            s1 = max(ends, key=lambda s: (s["t"], s["qemu"]))
            row.update(window_metrics(s0, s1))
            # Around the whole fio process (its start-up included).
            row.update(others_metrics(t0, o0, t1, o1))
            row["status"] = "ok"
        except (ValueError, KeyError, IndexError, OSError) as e:
            row["status"] = "error"
            row["note"] = "%s: %s" % (type(e).__name__, e)
        return row

    def stop(self):
        self.wakeups.stop()
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                kill_proc(self.proc)
        if getattr(self, "err", None):
            self.err.close()


# ---------------------------------------------------------------- matrix

def schedule(venues, variants, warmup, runs, round_major=False):
    """[(round, venue, variant)] in run order.  Rounds go round-robin over
    the variants, the order rotated by one each round; a warm-up round
    (round <= 0) is one boot, of each variant in turn.  Venue by venue, or
    with round_major each round visits every venue before the next round
    starts, so that a run cut short still has every venue, with fewer
    rounds."""
    n = len(variants)
    rounds = list(range(1 - warmup if warmup else 1, runs + 1))

    def order(rnd):
        if rnd <= 0:
            return [variants[-rnd % n]]
        k = (rnd - 1) % n
        return variants[k:] + variants[:k]

    if round_major:
        return [(r, ve, v) for r in rounds for ve in venues for v in order(r)]
    return [(r, ve, v) for ve in venues for r in rounds for v in order(r)]


class Matrix:
    def __init__(self, a):
        self.a = a
        self.variants = [Variant(s) for s in a.variant]
        self.csv_path = os.path.join(a.out, "samples.csv")
        new = not os.path.exists(self.csv_path)
        self.csv_f = open(self.csv_path, "a", newline="")
        self.csv = csv.DictWriter(self.csv_f, fieldnames=FIELDS,
                                  extrasaction="ignore")
        if new:
            self.csv.writeheader()
        self.broken = {}   # (venue, label) -> reason
        self.hangs = 0
        self.sockdir = tempfile.mkdtemp(prefix="apw-bench-")

    def write(self, venue, v, rnd, attempt, job, row, started):
        base = {"venue": venue, "workload": job["name"], "variant": v.label,
                "round": rnd, "attempt": attempt, "hang": 0,
                "rate_iops": job["rate"], "props": v.props,
                "binary": v.bindir, "load1": started[1],
                "started": time.strftime("%Y-%m-%dT%H:%M:%S",
                                         time.localtime(started[0]))}
        base.update(finish_row(dict(row)))
        self.csv.writerow(base)
        self.csv_f.flush()
        if base["status"] == "ok":
            log("  %-8s r%d %-14s %-24s %8.0f IOPS  lat %7.1f us (p99 %7.1f)"
                "  io1 %6.3f ms/kIO  qemu %7.3f ms/kIO" % (
                    venue, rnd, v.label, job["name"], base["iops"],
                    base["lat_mean_us"], base["lat_p99_us"],
                    base.get("iothread_cpu_ms_per_kio", 0),
                    base.get("qemu_cpu_ms_per_kio", 0)))
        else:
            log("  %-8s r%d %-14s %-24s %s %s" % (
                venue, rnd, v.label, job["name"], base["status"].upper(),
                base.get("note", "")))

    def rundir(self, venue, rnd, v, attempt):
        d = os.path.join(self.a.out, "raw", "%s-r%d-%s-a%d" % (venue, rnd, v.label, attempt))
        os.makedirs(d, exist_ok=True)
        return d

    def guest_round(self, rnd, v, jobs, venue="guest"):
        pending, attempt = list(jobs), 1
        while pending and attempt <= 2:
            started = (time.time(), load1())
            d = self.rundir(venue, rnd, v, attempt)
            boot = GuestBoot(self.a, v, pending, d, self.sockdir, venue)
            try:
                rows, hung = boot.run()
            except RuntimeError as e:
                self.broken[(venue, v.label)] = str(e)
                for j in pending:
                    self.write(venue, v, rnd, attempt, j,
                               {"status": "error", "note": str(e)[:300]}, started)
                return
            for j, r in zip(pending, rows):
                self.write(venue, v, rnd, attempt, j, r, started)
            if hung is None:
                return
            self.hangs += 1
            j = pending[hung]
            self.write(venue, v, rnd, attempt, j,
                       {"status": "hang", "hang": 1,
                        "note": "watchdog in %s; device state in %s" % (
                            boot.hung_phase, os.path.relpath(
                                os.path.join(d, "hang-state.json"), self.a.out))},
                       started)
            pending = pending[hung:]
            attempt += 1

    def nbd_round(self, rnd, v, jobs):
        pending, attempt = list(jobs), 1
        while pending and attempt <= 2:
            d = self.rundir("nbd", rnd, v, attempt)
            daemon = NbdDaemon(self.a, v, d, self.sockdir)
            try:
                started = (time.time(), load1())
                try:
                    daemon.start()
                except RuntimeError as e:
                    self.broken[("nbd", v.label)] = str(e)
                    for j in pending:
                        self.write("nbd", v, rnd, attempt, j,
                                   {"status": "error", "note": str(e)[:300]}, started)
                    return
                while pending:
                    j = pending[0]
                    jd = os.path.join(d, j["name"])
                    os.makedirs(jd, exist_ok=True)
                    started = (time.time(), load1())
                    r = daemon.run_job(j, jd)
                    self.write("nbd", v, rnd, attempt, j, r, started)
                    if r.get("hang"):
                        self.hangs += 1
                        break
                    pending.pop(0)
            finally:
                daemon.stop()
            attempt += 1

    def run(self):
        a = self.a
        n = len(self.variants)
        try:
            jobs = {venue: venue_jobs(a, venue) for venue in a.venues}
            for venue in a.venues:
                log("== %s: %d variant(s) x %d workload(s), %d warm-up + %d "
                    "measured round(s), %d s each" % (
                        venue, n, len(jobs[venue]), a.warmup, a.runs, a.runtime))
            for rnd, venue, v in schedule(a.venues, self.variants, a.warmup,
                                          a.runs, a.round_major):
                if (venue, v.label) in self.broken:
                    continue
                if is_guest(venue):
                    self.guest_round(rnd, v, jobs[venue], venue)
                else:
                    self.nbd_round(rnd, v, jobs[venue])
        finally:
            shutil.rmtree(self.sockdir, ignore_errors=True)
            self.csv_f.close()
        for (venue, label), why in self.broken.items():
            log("warning: %s %s failed and was skipped: %s" % (venue, label, why[:500]))
        log("hangs: %d" % self.hangs)
        return 2 if self.broken else 0


def binary_version(path):
    try:
        out = subprocess.run([path, "--version"], capture_output=True,
                             text=True, timeout=20).stdout
        return out.splitlines()[0].strip()
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return "?"


def write_meta(a):
    with open("/proc/cpuinfo") as f:
        model = next((l.split(":", 1)[1].strip() for l in f
                      if l.startswith("model name")), "?")
    m = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "host": "%s, %d CPUs, %s" % (os.uname().release, os.cpu_count(), model),
        "venues": ",".join(a.venues),
        "rounds": "%d warm-up + %d measured, %d s of fio per job, round-robin "
                  "rotated%s" % (a.warmup, a.runs, a.runtime,
                                 ", every venue in each round" if a.round_major else ""),
        "workloads": "%s%s; rate-limited job at %d IOPS (guest), %d IOPS (nbd)" % (
            a.workloads, " + full matrix" if a.full_matrix else "",
            a.rate_iops_guest, a.rate_iops_nbd),
        "data disk": "%s (%d MiB), %s" % (
            a.disk, os.path.getsize(a.disk) >> 20, file_opts(a)),
        "multi-disk data disks": "%d files of %d MiB (%s), %s" % (
            len(a.disks), os.path.getsize(a.disks[0]) >> 20,
            os.path.dirname(a.disks[0]), file_opts(a)) if a.disks else "-",
        "pinning": {
            "split": "vCPU on the first CPU, IOThreads on the last "
                     "(--pin split)",
            "swap": "IOThreads on the first CPU, vCPU on the last "
                    "(--pin swap)"}.get(a.pin,
                                        "none (the scheduler places threads)"),
        "fio": binary_version("fio"),
        "io_uring": io_uring_state(),
    }
    for spec in a.variant:
        v = Variant(spec)
        exe = v.system if any(is_guest(x) for x in a.venues) else v.qsd
        m["variant " + v.label] = "%s, iothread,id=io1%s (%s)" % (
            v.bindir, "," + v.props if v.props else "", binary_version(exe))
    for kv in a.meta:
        k, _, val = kv.partition("=")
        m[k] = val
    with open(os.path.join(a.out, "meta.json"), "w") as f:
        json.dump(m, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--variant", action="append", required=True,
                    help="LABEL=BINDIR[:IOTHREAD-PROPS], in order")
    ap.add_argument("--venues", default="guest,nbd")
    ap.add_argument("--workloads", default="sat,rate")
    ap.add_argument("--full-matrix", action="store_true")
    ap.add_argument("--runtime", type=int, default=10)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--watchdog", type=int, default=120)
    ap.add_argument("--rate-iops-guest", type=int, default=1340)
    ap.add_argument("--rate-iops-nbd", type=int, default=2000)
    ap.add_argument("--aio", default="native")
    ap.add_argument("--cache", choices=("direct", "page"), default="direct",
                    help="page: the data disks through the host's page "
                    "cache (cache.direct=off; aio threads or io_uring)")
    ap.add_argument("--iter-trace", action="store_true",
                    help="record the iteration trace of a build with "
                    "harness/replay/iter_trace.py in each run's folder")
    ap.add_argument("--trace-events", metavar="PATTERN", default="",
                    help="QEMU's trace events PATTERN (e.g. "
                    "poll_wakeup_price) in each run's trace.log; not with "
                    "--iter-trace")
    ap.add_argument("--sched-wakeups", action="store_true",
                    help="with --iter-trace: the kernel's sched_waking "
                    "events of the IOThreads in each run's folder "
                    "(sched-wakeups.txt; tracefs, root)")
    ap.add_argument("--fio-args", default="",
                    help="extra fio options for every job (no spaces inside one)")
    ap.add_argument("--disk", required=True)
    ap.add_argument("--disks", default="",
                    help="comma list of the multi-disk venues' data disk "
                    "files (8)")
    ap.add_argument("--round-major", action="store_true",
                    help="each round visits every venue (a run cut short "
                    "keeps every venue)")
    ap.add_argument("--pin", choices=("none", "split", "swap"),
                    default="none",
                    help="split: the vCPU on the first CPU, the IOThreads "
                    "on the last; swap: the other way round (guest "
                    "venues)")
    ap.add_argument("--kernel")
    ap.add_argument("--initrd")
    ap.add_argument("--bios-dir")
    ap.add_argument("--meta", action="append", default=[],
                    help="KEY=VALUE for meta.json (the report prints it)")
    ap.add_argument("--qemu-src",
                    help="QEMU tree whose python/qemu/qmp is the QMP client "
                         "(default: the tree beside the first variant's "
                         "build folder)")
    a = ap.parse_args()
    if a.iter_trace and a.trace_events:
        ap.error("--trace-events and --iter-trace write one trace file: "
                 "choose one")
    global QEMU_SRC
    QEMU_SRC = a.qemu_src or qmpclient.qemu_src_of(
        a.variant[0].split("=", 1)[1].split(":", 1)[0] + "/x")
    if not QEMU_SRC:
        ap.error("no QEMU tree with python/qemu/qmp found: pass --qemu-src")
    qmpclient.legacy_client(QEMU_SRC)
    a.venues = [x for x in a.venues.split(",") if x]
    for x in a.venues:
        if x not in VENUES:
            ap.error("unknown venue %s (%s)" % (x, ", ".join(VENUES)))
    a.disks = [x for x in a.disks.split(",") if x]
    for x in a.venues:
        if is_guest(x) and guest_disks(x) > 1 and len(a.disks) < guest_disks(x):
            ap.error("venue %s needs --disks with %d files" % (x, guest_disks(x)))
    if a.cache == "page" and a.aio == "native":
        ap.error("--cache page needs --aio threads or io_uring: aio=native "
                 "requires cache.direct=on")
    os.makedirs(a.out, exist_ok=True)
    write_meta(a)
    if a.cache == "page":
        log("page cache: read %d MiB of data disks in" % read_in(
            sorted(set([a.disk] + a.disks))))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    return Matrix(a).run()


if __name__ == "__main__":
    sys.exit(main())
