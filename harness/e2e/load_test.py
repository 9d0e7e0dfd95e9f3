#!/usr/bin/python3
"""End-to-end load test: IOThread poll parameters changed under NBD I/O.

qemu-storage-daemon exports a raw file (O_DIRECT, Linux AIO or io_uring)
over NBD on a unix socket, served by iothread io1 created with
poll-weight=3.  fio writes at random with crc32c verification for
--runtime seconds; meanwhile a QMP client changes poll-weight,
poll-max-ns, poll-grow and poll-shrink of io1 several hundred times
(valid random values from a fixed seed, and some invalid ones, which must
be refused and leave the value alone).  Afterwards a separate fio job
reads the whole file back and checks every 4 KiB block.

Pass iff:
  - each fio run exits 0 and reports no error (verify_fatal=1),
  - the load job did verify reads and the final pass read the whole file,
  - every valid QMP change took effect (qom-get after each, the whole
    state every 25 changes), every invalid one was refused with the
    expected error and changed nothing,
  - at least --min-changes valid changes were made,
  - the daemon is still alive and reports the last values.

query-iothreads: qemu-storage-daemon 10.2.2 does not have it (qapi/misc.json
is not part of its schema), so against it the state is read with qom-get
of each property, and the start-up line says "query-iothreads missing".
Where the daemon has it (a series that adds it, or --qemu, which runs
qemu-system-x86_64 -machine none as the NBD server instead) the state
checks use query-iothreads.

A summary line is printed; the exit status is 0 on pass, 1 on failure
(2 for bad usage).  Processes and the temporary directory are cleaned up
on every path, including SIGINT/SIGTERM.

--no-poll-weight is for unpatched binaries (such as QEMU 10.2.2 itself),
which lack the poll-weight property: io1 is created without it and only
poll-max-ns, poll-grow and poll-shrink are changed.  It proves the flow
of the test, not the series.

Examples (about runtime + 15 s each; needs fio with the nbd engine):
  /usr/bin/python3 harness/e2e/load_test.py \\
      --qsd work/10.2.2/series/build-all/storage-daemon/qemu-storage-daemon \\
      --qemu-src work/10.2.2/series/src --runtime 30
  /usr/bin/python3 harness/e2e/load_test.py \\
      --qsd work/10.2.2/base/build-all/storage-daemon/qemu-storage-daemon \\
      --qemu-src work/10.2.2/base/src --no-poll-weight
"""

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
import qmpclient  # noqa: E402  (the harness's QMP client: qemu.qmp)

INT64_MAX = 2**63 - 1
INT64_MIN = -2**63

POLL_WEIGHT_DEFAULT = 3
POLL_WEIGHT_ERROR = "poll-weight value must be in range [0, 63]"
POLL_NS_ERROR = "{} value must be in range [0, 9223372036854775807]"

EXPORT = "disk0"
BLOCK = 4096
QMP_TIMEOUT = 10.0


class TestFailure(Exception):
    pass


class Terminated(Exception):
    pass


def log(msg):
    print(f"load_test: {msg}", flush=True)


def on_signal(signum, _frame):
    raise Terminated(f"signal {signum}")


# --- values -----------------------------------------------------------

# What 0 stands for, and what qom-get reports after setting 0: the value
# in effect, as QEMU 11.1 does (patch 3).  A QEMU without the series
# (--no-poll-weight) reports 0 for poll-grow and poll-shrink.
IN_EFFECT = {"poll-weight": POLL_WEIGHT_DEFAULT, "poll-grow": 2,
             "poll-shrink": 2}


def effective(prop, value):
    """What qom-get reports after setting @prop to @value."""
    if value == 0 and prop in IN_EFFECT:
        return IN_EFFECT[prop]
    return value


def valid_value(rng, prop):
    r = rng.random()
    if prop == "poll-weight":
        if r < 0.10:
            return 0
        if r < 0.15:
            return rng.choice([1, 63])
        return rng.randint(1, 63)
    if prop == "poll-max-ns":
        if r < 0.10:
            return 0
        if r < 0.80:
            return rng.randint(1, 100000)
        if r < 0.97:
            return rng.randint(100001, 2000000)
        return rng.randint(2000001, 10000000)
    # poll-grow, poll-shrink
    if r < 0.15:
        return 0
    if r < 0.90:
        return rng.randint(1, 16)
    return rng.randint(17, 100000)


def invalid_value(rng, prop):
    """An invalid value and the exact error expected (None: names prop)."""
    if prop == "poll-weight":
        ints = [-1, 64, 65, 100, 256, INT64_MAX, INT64_MIN]
        range_error = POLL_WEIGHT_ERROR
    else:
        ints = [-1, -100, INT64_MIN]
        range_error = POLL_NS_ERROR.format(prop)
    others = ["abc", "7", "", 1.5, 2.0, True, False, None, [3], {}]
    if rng.random() < 0.5:
        return rng.choice(ints), range_error
    return rng.choice(others), None


# --- processes ----------------------------------------------------------

def kill_group(proc, name, grace=5.0):
    """Stop @proc (leader of its own process group)."""
    if proc is None or proc.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            log(f"{name} (pid {proc.pid}) ignored signal {sig}")


def tail(path, n=20):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return ""


def check_fio(fio):
    try:
        out = subprocess.run([fio, "--version"], capture_output=True,
                             text=True, timeout=30, check=False).stdout
        engines = subprocess.run([fio, "--enghelp"], capture_output=True,
                                 text=True, timeout=30, check=False).stdout
    except OSError as e:
        raise TestFailure(f"cannot run fio ({fio}): {e}") from e
    if "nbd" not in engines.split():
        raise TestFailure(f"{fio} ({out.strip()}) has no nbd engine")
    return out.strip()


def run_fio(fio, name, args, workdir, state):
    """Start one fio run in its own process group."""
    out = os.path.join(workdir, f"fio-{name}.json")
    errlog = os.path.join(workdir, f"fio-{name}.err")
    cmd = [fio, f"--name={name}", "--output-format=json",
           f"--output={out}"] + args
    log(f"fio {name}: {' '.join(cmd[1:])}")
    with open(errlog, "w") as err:
        # cwd: fio leaves *-verify.state files there when a job fails
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err,
                                cwd=workdir, start_new_session=True)
    state["fio"] = proc
    return proc, out, errlog


def fio_result(name, proc, out, errlog, state):
    """Check an exited fio run; return its jobs."""
    rc = proc.returncode
    try:
        with open(out, errors="replace") as f:
            text = f.read()
        # fio may put warnings before the JSON document
        start = text.find("{")
        jobs = json.loads(text[start:])["jobs"] if start >= 0 else []
    except (OSError, ValueError) as e:
        raise TestFailure(f"fio {name}: no JSON output ({e}); rc={rc}; "
                          f"stderr: {tail(errlog)}") from e
    errors = 0
    for job in jobs:
        errors += int(job.get("error", 0) != 0)
        errors += int(job.get("total_err", 0))
    state["fio_errors"] = state.get("fio_errors", 0) + errors
    if rc != 0 or errors or not jobs:
        raise TestFailure(f"fio {name}: rc={rc}, errors={errors}; "
                          f"stderr: {tail(errlog)}")
    return jobs


def wait_fio(name, handle, deadline, state):
    proc, out, errlog = handle
    try:
        proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired as e:
        kill_group(proc, f"fio {name}")
        raise TestFailure(f"fio {name} ran past its deadline") from e
    return fio_result(name, proc, out, errlog, state)


# --- QMP ------------------------------------------------------------------

class Monitor(qmpclient.Monitor):
    """qemu.qmp (harness/lib/qmpclient.py) with io1's properties."""

    def __init__(self, qemu_src, path, qsd, deadline):
        super().__init__(qemu_src, path, proc=qsd, deadline=deadline,
                         timeout=QMP_TIMEOUT)
        self._has_query = None

    def ok(self, cmd, args=None):
        rsp = self.raw(cmd, args)
        if "return" not in rsp:
            raise TestFailure(f"QMP {cmd} {args}: {rsp}")
        return rsp["return"]

    def qom_set(self, prop, value):
        return self.raw("qom-set", {"path": "/objects/io1",
                                    "property": prop, "value": value})

    def qom_get(self, prop):
        return self.ok("qom-get", {"path": "/objects/io1", "property": prop})

    def has_query_iothreads(self):
        if self._has_query is None:
            rsp = self.raw("query-iothreads")
            err = rsp.get("error", {})
            self._has_query = err.get("class") != "CommandNotFound"
        return self._has_query

    def iothread(self, props):
        """io1's @props, from query-iothreads where the binary has it."""
        if not self.has_query_iothreads():
            # qemu-storage-daemon 10.2 has no query-iothreads (misc.json
            # is not in its schema): read the properties one by one
            return {p: self.qom_get(p) for p in props}
        for info in self.ok("query-iothreads"):
            if info.get("id") == "io1":
                return info
        raise TestFailure("query-iothreads does not list io1")



def check_state(mon, expected, where):
    info = mon.iothread(list(expected))
    how = "query-iothreads" if mon.has_query_iothreads() else "qom-get"
    for prop, value in expected.items():
        got = info.get(prop)
        if got != value:
            raise TestFailure(f"{where}: {how} {prop}={got}, "
                              f"expected {value} ({info})")


class Changer:
    """Random QMP changes of io1's poll parameters, checked one by one."""

    def __init__(self, mon, props, expected, seed, invalid_ratio):
        self.mon = mon
        self.props = props
        self.expected = expected
        self.rng = random.Random(seed)
        self.invalid_ratio = invalid_ratio
        self.changes = 0
        self.invalid = 0
        self.per_prop = {p: 0 for p in props}

    def step(self):
        prop = self.rng.choice(self.props)
        if self.rng.random() < self.invalid_ratio:
            value, desc = invalid_value(self.rng, prop)
            rsp = self.mon.qom_set(prop, value)
            self.invalid += 1
            err = rsp.get("error")
            if not err or "return" in rsp:
                raise TestFailure(f"qom-set {prop}={value!r} was accepted")
            if err.get("class") != "GenericError":
                raise TestFailure(f"qom-set {prop}={value!r}: {err}")
            if desc is not None and err.get("desc") != desc:
                raise TestFailure(f"qom-set {prop}={value!r}: '{err}', "
                                  f"expected '{desc}'")
            if desc is None and prop not in err.get("desc", ""):
                raise TestFailure(f"qom-set {prop}={value!r}: error "
                                  f"'{err}' does not name {prop}")
        else:
            value = valid_value(self.rng, prop)
            rsp = self.mon.qom_set(prop, value)
            if "return" not in rsp:
                raise TestFailure(f"qom-set {prop}={value}: {rsp}")
            self.expected[prop] = effective(prop, value)
            self.changes += 1
            self.per_prop[prop] += 1
        got = self.mon.qom_get(prop)
        if got != self.expected[prop]:
            raise TestFailure(f"after qom-set {prop}={value!r}: qom-get "
                              f"{got}, expected {self.expected[prop]}")
        if (self.changes + self.invalid) % 25 == 0:
            check_state(self.mon, self.expected,
                        f"after {self.changes} changes")


# --- the test ---------------------------------------------------------------

def parse_args(argv):
    p = argparse.ArgumentParser(
        description="IOThread poll parameters changed over QMP while fio "
                    "writes and verifies over NBD (qemu-storage-daemon).")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--qsd", help="qemu-storage-daemon binary (the "
                       "intended setup)")
    which.add_argument("--qemu", help="instead: a qemu-system binary, run "
                       "with -machine none, exporting over QMP's "
                       "nbd-server-start/block-export-add (it has "
                       "query-iothreads, which qemu-storage-daemon "
                       "10.2 lacks)")
    p.add_argument("--qemu-src", required=True,
                   help="QEMU source tree (its python/ has qemu.qmp)")
    p.add_argument("--runtime", type=int, default=30,
                   help="seconds of randwrite+verify under QMP changes "
                        "(default 30, at least 30 for a real run)")
    p.add_argument("--size-mib", type=int, default=256,
                   help="size of the exported raw file (default 256)")
    p.add_argument("--aio", choices=["io_uring", "native"],
                   default="io_uring", help="file driver aio (default "
                   "io_uring); cache.direct=on either way")
    p.add_argument("--jobs", type=int, default=2,
                   help="fio jobs, each on its own NBD connection and "
                        "slice of the file (default 2)")
    p.add_argument("--iodepth", type=int, default=16)
    p.add_argument("--seed", type=int, default=20260101,
                   help="seed of the QMP changes and of fio (default "
                        "20260101)")
    p.add_argument("--interval", type=float, default=0.02,
                   help="pause between two QMP changes (default 0.02 s)")
    p.add_argument("--invalid-ratio", type=float, default=0.15,
                   help="share of invalid values tried (default 0.15)")
    p.add_argument("--min-changes", type=int, default=200,
                   help="fail if fewer valid changes were made "
                        "(default 200)")
    p.add_argument("--no-poll-weight", action="store_true",
                   help="for unpatched binaries without poll-weight: "
                        "create io1 without it and change only "
                        "poll-max-ns, poll-grow and poll-shrink")
    p.add_argument("--fio", default="fio", help="fio binary (default fio)")
    p.add_argument("--workdir", default=None,
                   help="where to make the temporary directory (default "
                        "$TMPDIR or /tmp; must support O_DIRECT)")
    p.add_argument("--keep", action="store_true",
                   help="keep the temporary directory (logs) on failure")
    args = p.parse_args(argv)
    if args.runtime < 1 or args.size_mib < 16 or args.jobs < 1:
        p.error("need --runtime >= 1, --size-mib >= 16, --jobs >= 1")
    if args.size_mib % args.jobs:
        p.error("--size-mib must be a multiple of --jobs")
    # fio runs in the temporary directory
    args.fio = shutil.which(args.fio) or os.path.abspath(args.fio)
    return args


def start_daemon(args, tmp, image, qmp_sock, nbd_sock):
    iothread = "iothread,id=io1"
    if not args.no_poll_weight:
        iothread += f",poll-weight={POLL_WEIGHT_DEFAULT}"
    blockdevs = [
        f"driver=file,node-name=file0,filename={image},aio={args.aio},"
        "cache.direct=on",
        "driver=raw,node-name=disk0,file=file0",
    ]
    chardev = f"socket,id=qmp0,path={qmp_sock},server=on,wait=off"
    if args.qsd:
        cmd = [args.qsd, "--object", iothread,
               "--blockdev", blockdevs[0], "--blockdev", blockdevs[1],
               "--nbd-server", f"addr.type=unix,addr.path={nbd_sock}",
               "--export", f"type=nbd,id=exp0,node-name=disk0,"
                           f"name={EXPORT},writable=on,iothread=io1",
               "--chardev", chardev, "--monitor", "chardev=qmp0"]
    else:
        # the NBD export is added over QMP once connected, see run()
        cmd = [args.qemu, "-machine", "none", "-nodefaults",
               "-display", "none", "-object", iothread,
               "-blockdev", blockdevs[0], "-blockdev", blockdevs[1],
               "-chardev", chardev, "-mon", "chardev=qmp0,mode=control"]
    log("daemon: " + " ".join(cmd))
    qsd_log = os.path.join(tmp, "qsd.log")
    with open(qsd_log, "w") as f:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=f,
                                stderr=subprocess.STDOUT,
                                start_new_session=True)
    return proc, qsd_log


def run(args, tmp, state):
    fio_version = check_fio(args.fio)
    size = args.size_mib * 1024 * 1024
    image = os.path.join(tmp, "disk.raw")
    with open(image, "wb") as f:
        f.truncate(size)
    qmp_sock = os.path.join(tmp, "qmp.sock")
    nbd_sock = os.path.join(tmp, "nbd.sock")
    uri = f"nbd+unix:///{EXPORT}?socket={nbd_sock}"

    qsd, qsd_log = start_daemon(args, tmp, image, qmp_sock, nbd_sock)
    state["qsd"], state["qsd_log"] = qsd, qsd_log
    mon = Monitor(args.qemu_src, qmp_sock, qsd, time.monotonic() + 30)
    state["mon"] = mon
    if args.qemu:
        mon.ok("nbd-server-start", {"addr": {"type": "unix",
                                             "data": {"path": nbd_sock}}})
        mon.ok("block-export-add", {"type": "nbd", "id": "exp0",
                                    "node-name": "disk0", "name": EXPORT,
                                    "writable": True, "iothread": "io1"})

    props = ["poll-max-ns", "poll-grow", "poll-shrink"]
    if not args.no_poll_weight:
        props.insert(0, "poll-weight")
    else:
        IN_EFFECT.clear()       # 0 is reported as 0
    info = mon.iothread(props)
    expected = {p: info.get(p) for p in props}
    if not args.no_poll_weight and expected["poll-weight"] != 3:
        raise TestFailure(f"io1 created with poll-weight=3 shows {info}")
    for p in props:
        if not isinstance(expected[p], int) or mon.qom_get(p) != expected[p]:
            raise TestFailure(f"io1 {p}: query-iothreads {info}, qom-get "
                              f"{mon.qom_get(p)}")
    how = ("available" if mon.has_query_iothreads()
           else "missing, using qom-get")
    log(f"{fio_version}; io1 at start: {info}; query-iothreads {how}")

    common = ["--ioengine=nbd", f"--uri={uri}", f"--iodepth={args.iodepth}",
              "--verify=crc32c", f"--verify_interval={BLOCK}",
              "--verify_fatal=1", f"--randseed={args.seed}"]
    whole = [f"--size={size}", "--bs=1M"]

    # 1. every block gets a verify header, so the final pass can check all
    t0 = time.monotonic()
    handle = run_fio(args.fio, "prefill", common + whole + [
        "--rw=write", "--do_verify=0"], tmp, state)
    wait_fio("prefill", handle, time.monotonic() + 120 + size / 2**20, state)

    # 2. random writes, verified as they go, while QMP changes io1
    slice_size = size // args.jobs
    load_args = common + [
        "--rw=randwrite", "--bssplit=4k/70:16k/20:64k/10",
        f"--numjobs={args.jobs}", f"--size={slice_size}",
        f"--offset_increment={slice_size}", "--do_verify=1",
        "--verify_backlog=256", "--time_based", f"--runtime={args.runtime}"]
    changer = Changer(mon, props, expected, args.seed, args.invalid_ratio)
    state["changer"] = changer
    handle = run_fio(args.fio, "load", load_args, tmp, state)
    deadline = time.monotonic() + args.runtime + 120
    t_load = time.monotonic()
    while handle[0].poll() is None:
        if time.monotonic() > deadline:
            kill_group(handle[0], "fio load")
            raise TestFailure("fio load ran past its deadline")
        changer.step()
        time.sleep(args.interval)
    load_jobs = wait_fio("load", handle, deadline, state)
    load_secs = time.monotonic() - t_load
    check_state(mon, expected, "after the load")

    write_iops = sum(j["write"]["iops"] for j in load_jobs)
    written = sum(j["write"]["io_bytes"] for j in load_jobs)
    verified = sum(j["read"]["io_bytes"] for j in load_jobs)
    state["iops"] = write_iops
    if written <= 0 or verified <= 0:
        raise TestFailure(f"load: {written} bytes written, {verified} "
                          "verified")

    # 3. a separate pass reads and checks the whole file
    handle = run_fio(args.fio, "verify", common + whole + ["--rw=read"],
                     tmp, state)
    check_jobs = wait_fio("verify", handle,
                          time.monotonic() + 120 + size / 2**20, state)
    read_back = sum(j["read"]["io_bytes"] for j in check_jobs)
    if read_back != size:
        raise TestFailure(f"verify pass read {read_back} of {size} bytes")

    # 4. the daemon is alive and reports the last values
    if qsd.poll() is not None:
        raise TestFailure(f"daemon exited with {qsd.returncode}")
    check_state(mon, expected, "at the end")
    if changer.changes < args.min_changes:
        raise TestFailure(f"only {changer.changes} changes made, "
                          f"--min-changes is {args.min_changes}")
    log(f"changes per property: {changer.per_prop}; last values "
        f"{expected}; load {load_secs:.1f} s, {written / 2**20:.0f} MiB "
        f"written, {verified / 2**20:.0f} MiB verified during the load, "
        f"{read_back / 2**20:.0f} MiB in the final pass; total "
        f"{time.monotonic() - t0:.1f} s")


def cleanup(state, tmp, keep):
    kill_group(state.get("fio"), "fio")
    mon = state.get("mon")
    qsd = state.get("qsd")
    if mon is not None and qsd is not None and qsd.poll() is None:
        try:
            mon.settimeout(5.0)
            mon.raw("quit")
        except Exception:  # pylint: disable=broad-except
            pass
    if mon is not None:
        mon.close()
    if qsd is not None:
        try:
            qsd.wait(timeout=10)
        except subprocess.TimeoutExpired:
            kill_group(qsd, "daemon")
    if keep:
        log(f"kept {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv=None):
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    tmp = os.path.abspath(tempfile.mkdtemp(prefix="apw-load-",
                                           dir=args.workdir))
    state = {}
    failure = None
    try:
        run(args, tmp, state)
    except (TestFailure, Terminated, qmpclient.QMPFailure) as e:
        failure = str(e)
    except Exception as e:  # pylint: disable=broad-except
        failure = f"unexpected {e!r}"
    if failure and state.get("qsd_log"):
        log(f"daemon log tail:\n{tail(state['qsd_log'])}")
    changer = state.get("changer")
    try:
        cleanup(state, tmp, keep=bool(failure) and args.keep)
    except Terminated:
        shutil.rmtree(tmp, ignore_errors=True)
    mode = "no-poll-weight" if args.no_poll_weight else "poll-weight"
    summary = (f"load_test: {'PASS' if not failure else 'FAIL'} "
               f"mode={mode} "
               f"changes={changer.changes if changer else 0} "
               f"invalid={changer.invalid if changer else 0} "
               f"fio_errors={state.get('fio_errors', 'n/a')} "
               f"write_iops={state.get('iops', 0):.0f} "
               f"runtime={args.runtime}s seed={args.seed} aio={args.aio}")
    if failure:
        print(f"load_test: failure: {failure}", flush=True)
    print(summary, flush=True)
    return 1 if failure else 0


if __name__ == "__main__":
    sys.exit(main())
