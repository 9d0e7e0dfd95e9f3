#!/usr/bin/python3
"""Show the poll-weight knob at work over QMP: ./apw demo."""

import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import qmpclient  # noqa: E402  (the harness's QMP client: qemu.qmp)

IO1 = {"path": "/objects/io1", "property": "poll-weight"}

STEPS = [
    ("QEMU started with -object iothread,id=io1,poll-weight=3",
     [("query-iothreads", None)]),
    ("qom-set 2 at run time:",
     [("qom-set", dict(IO1, value=2)), ("qom-get", IO1)]),
    ("qom-set 0 selects the default, shown as 3:",
     [("qom-set", dict(IO1, value=0)), ("qom-get", IO1)]),
    ("64 is refused and the value stays:",
     [("qom-set", dict(IO1, value=64)), ("qom-get", IO1)]),
]


def main():
    qemu = sys.argv[1]
    qemu_src = qmpclient.qemu_src_of(qemu)

    def qmp(path, commands):
        return qmpclient.run_commands(qemu_src, path, commands)

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
        for title, commands in STEPS:
            print("\n" + title)
            for cmd, args, reply in qmp(sock_path, commands):
                msg = {"execute": cmd}
                if args:
                    msg["arguments"] = args
                print("-> " + json.dumps(msg))
                print("<- " + json.dumps(reply))
        print("\nHMP info iothreads:")
        hmp = qmp(sock_path, [("human-monitor-command",
                               {"command-line": "info iothreads"}),
                              ("quit", None)])
        print(hmp[0][2]["return"], end="")
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
