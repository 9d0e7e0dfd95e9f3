"""The harness's one QMP client: qemu.qmp from the QEMU tree.

The benchmark (harness/bench/run.py), the demo and the end-to-end tests
(harness/e2e/) all speak QMP through this module, which takes
QEMUMonitorProtocol from the tree's python/qemu/qmp (the same client that
QEMU's own iotests and functional tests use) rather than socket code of
their own.

  mon = Monitor(qemu_src, "/tmp/x/qmp.sock", proc=daemon, timeout=10)
  mon.ok("qom-set", {"path": "/objects/io1", "property": "poll-weight",
                     "value": 2})
  mon.raw("qom-set", {...})       # the whole reply: "return" or "error"
  mon.close()

  run_commands(qemu_src, path, [("query-iothreads", None), ...])
      one connection, several commands, every reply kept
"""

import os
import sys
import time

QMP_TIMEOUT = 10.0


class QMPFailure(Exception):
    """QMP could not be reached, or a command failed."""


def qemu_src_of(path):
    """The QEMU tree above @path (a binary in a build folder next to its
    tree, BW/series/build-all/... -> BW/series/src), or None."""
    d = os.path.dirname(os.path.abspath(path))
    while d != os.path.dirname(d):
        if os.path.basename(d).startswith("build"):
            src = os.path.join(os.path.dirname(d), "src")
            if os.path.isdir(os.path.join(src, "python", "qemu", "qmp")):
                return src
        d = os.path.dirname(d)
    return None


def legacy_client(qemu_src):
    """QEMUMonitorProtocol from @qemu_src/python/qemu/qmp."""
    pydir = os.path.join(os.path.abspath(qemu_src), "python")
    if not os.path.isdir(os.path.join(pydir, "qemu", "qmp")):
        raise QMPFailure(f"{qemu_src} has no python/qemu/qmp")
    if pydir not in sys.path:
        sys.path.insert(0, pydir)
    # pylint: disable=import-outside-toplevel
    from qemu.qmp.legacy import QEMUMonitorProtocol
    return QEMUMonitorProtocol


class Monitor:
    """A QMP connection to a QEMU process that may still be starting:
    waits for the socket until @deadline (a time.monotonic() value, default
    30 s from now) and fails early if @proc (a Popen) has exited."""

    def __init__(self, qemu_src, path, proc=None, deadline=None,
                 timeout=QMP_TIMEOUT):
        qmp_class = legacy_client(qemu_src)
        self.proc = proc
        if deadline is None:
            deadline = time.monotonic() + 30
        last = "no socket yet"
        while True:
            if proc is not None and proc.poll() is not None:
                raise QMPFailure(f"QEMU exited with {proc.returncode} "
                                 "during startup")
            if os.path.exists(path):
                try:
                    self.qmp = qmp_class(path)
                    self.qmp.connect()
                    break
                except Exception as e:  # pylint: disable=broad-except
                    last = e
            if time.monotonic() > deadline:
                raise QMPFailure(f"cannot connect to QMP at {path}: {last}")
            time.sleep(0.1)
        self.qmp.settimeout(timeout)

    def settimeout(self, timeout):
        self.qmp.settimeout(timeout)

    def raw(self, cmd, args=None):
        """The reply to @cmd: a dict with "return" or "error"."""
        if self.proc is not None and self.proc.poll() is not None:
            raise QMPFailure(f"QEMU exited with {self.proc.returncode}")
        try:
            return self.qmp.cmd_raw(cmd, args)
        except Exception as e:  # pylint: disable=broad-except
            raise QMPFailure(f"QMP {cmd} failed: {e!r}") from e

    def ok(self, cmd, args=None):
        """The return value of @cmd; an error reply raises QMPFailure."""
        rsp = self.raw(cmd, args)
        if "return" not in rsp:
            raise QMPFailure(f"QMP {cmd} {args}: {rsp}")
        return rsp["return"]

    def close(self):
        try:
            self.qmp.close()
        except Exception:  # pylint: disable=broad-except
            pass


def run_commands(qemu_src, path, commands, timeout=5.0):
    """Run QMP @commands [(name, args)] on one connection to the socket at
    @path; return [(name, args, reply)].  A command that raises gets the
    reply {"exception": text} and the rest still run (what a diagnostic
    dump wants)."""
    out = []
    mon = Monitor(qemu_src, path, deadline=time.monotonic() + timeout,
                  timeout=timeout)
    try:
        for cmd, args in commands:
            try:
                out.append((cmd, args, mon.qmp.cmd_raw(cmd, args)))
            except Exception as e:  # pylint: disable=broad-except
                out.append((cmd, args, {"exception": str(e)}))
    finally:
        mon.close()
    return out
