#!/usr/bin/python3
"""Show the poll-weight knob at work over QMP: ./apw demo."""

import json
import os
import socket
import subprocess
import sys
import tempfile
import time


def main():
    qemu = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="apw-demo-")
    sock_path = os.path.join(tmp, "qmp.sock")
    proc = subprocess.Popen(
        [qemu, "-machine", "none", "-display", "none", "-nodefaults",
         "-object", "iothread,id=io1,poll-weight=3",
         "-qmp", f"unix:{sock_path},server=on,wait=off"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(100):
            if os.path.exists(sock_path):
                break
            time.sleep(0.1)
        s = socket.socket(socket.AF_UNIX)
        s.connect(sock_path)
        f = s.makefile("rw")
        json.loads(f.readline())                    # greeting

        def qmp(cmd, show=True, **args):
            msg = {"execute": cmd}
            if args:
                msg["arguments"] = args
            f.write(json.dumps(msg) + "\n")
            f.flush()
            while True:
                rsp = json.loads(f.readline())
                if "event" not in rsp:
                    break
            if show:
                print("-> " + json.dumps(msg))
                print("<- " + json.dumps(rsp))
            return rsp

        qmp("qmp_capabilities", show=False)
        print("QEMU started with -object iothread,id=io1,poll-weight=3\n")
        qmp("query-iothreads")
        print("\nqom-set 2 at run time:")
        qmp("qom-set", path="/objects/io1", property="poll-weight", value=2)
        qmp("qom-get", path="/objects/io1", property="poll-weight")
        print("\nqom-set 0 selects the default, shown as 3:")
        qmp("qom-set", path="/objects/io1", property="poll-weight", value=0)
        qmp("qom-get", path="/objects/io1", property="poll-weight")
        print("\n64 is refused and the value stays:")
        qmp("qom-set", path="/objects/io1", property="poll-weight", value=64)
        qmp("qom-get", path="/objects/io1", property="poll-weight")
        print("\nHMP info iothreads:")
        rsp = qmp("human-monitor-command", show=False,
                  **{"command-line": "info iothreads"})
        print(rsp["return"], end="")
        qmp("quit", show=False)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
