#!/usr/bin/python3
"""Build harness/replay/aio-poll-replay.c against a configured QEMU build,
without meson or ninja.

It compiles the tool with the flags that the build uses for
tests/unit/test-aio-poll-weight.c (compile_commands.json), less that test's
private include folders, and links it the way build.ninja links that test
(its inputs other than its own object, and its LINK_ARGS: libqemuutil.a and
the libraries it needs).  The commands are read by
harness/callgrind/build.py's compile_command(), link_edge() and link_line().
The build folder is only read, and must have been built already
(libqemuutil.a present).

Usage: build.py BUILD_DIR SOURCE OUTPUT
"""

import os
import shlex
import subprocess
import sys

# The compile and link commands: harness/callgrind/build.py, imported as a
# module of the package harness/callgrind (this file has the same name)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
from callgrind import build as cgbuild  # noqa: E402

REF_TEST = "tests/unit/test-aio-poll-weight"


def private_include(arg):
    """The reference test's own include folders, not the tool's."""
    return arg.startswith("-Itests/unit") or arg.endswith("/tests/unit")


def commands(build, source, output):
    """[(what, argv, cwd)] that compile SOURCE and link OUTPUT."""
    cwd, cflags, _ = cgbuild.compile_command(build, REF_TEST + ".c")
    obj = output + ".o"
    cc = [a for a in cflags if not private_include(a)]
    rule, inputs, vars_ = cgbuild.link_edge(build, REF_TEST)
    others = [p for p in inputs if REF_TEST + ".p/" not in p]
    line, rsp = cgbuild.link_line(rule, others + [obj], vars_, output)
    if rsp is not None:
        sys.exit(f"build.py: {REF_TEST}'s link rule has a response file")
    return [("compile", cc + ["-o", obj, "-c", source], cwd),
            ("link", shlex.split(line), build)]


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    build, source, output = (os.path.abspath(a) for a in sys.argv[1:])
    os.makedirs(os.path.dirname(output), exist_ok=True)
    for what, cmd, cwd in commands(build, source, output):
        r = subprocess.run(cmd, cwd=cwd)
        if r.returncode:
            print(f"build.py: {what} failed:\n  cd {cwd} && "
                  + shlex.join(cmd), file=sys.stderr)
            sys.exit(1)


if __name__ == "__main__":
    main()
