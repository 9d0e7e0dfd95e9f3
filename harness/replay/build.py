#!/usr/bin/python3
"""Build harness/replay/aio-poll-replay.c against a configured QEMU build,
without meson or ninja.

It compiles the tool with the flags that the build uses for
tests/unit/test-aio-poll-weight.c (compile_commands.json) and links it with
the inputs and libraries of that test's link line (build.ninja):
libqemuutil.a and the objects it needs.  The build folder is only read,
and must have been built already (libqemuutil.a present).

Usage: build.py BUILD_DIR SOURCE OUTPUT
"""

import os
import shlex
import subprocess
import sys

REF_SOURCE = "tests/unit/test-aio-poll-weight.c"
REF_TARGET = "tests/unit/test-aio-poll-weight"


def compile_args(build):
    import json
    with open(os.path.join(build, "compile_commands.json")) as f:
        entries = json.load(f)
    for e in entries:
        if e["file"].endswith(REF_SOURCE):
            args = shlex.split(e["command"])
            break
    else:
        sys.exit(f"build.py: no {REF_SOURCE} in {build}/compile_commands.json"
                 " (a build without tests?)")
    out = []
    skip = 0
    for a in args:
        if skip:
            skip -= 1
            continue
        if a == "ccache":
            continue
        if a in ("-MQ", "-MF", "-o", "-c"):
            skip = 1
            continue
        if a == "-MD" or a.endswith(REF_SOURCE):
            continue
        # The reference's own private include folders
        if a.startswith("-Itests/unit") or a.endswith("/tests/unit"):
            continue
        out.append(a)
    return out


def link_args(build):
    """Inputs (but the test's own object) and LINK_ARGS of the test."""
    with open(os.path.join(build, "build.ninja")) as f:
        lines = f.read().split("\n")
    head = f"build {REF_TARGET}: "
    for i, line in enumerate(lines):
        if line.startswith(head):
            break
    else:
        sys.exit(f"build.py: no '{REF_TARGET}' in {build}/build.ninja")
    explicit = line[len(head):].split(" | ")[0].split()
    rule, inputs = explicit[0], explicit[1:]
    inputs = [x for x in inputs if "test-aio-poll-weight.p/" not in x]
    link = []
    for extra in lines[i + 1:]:
        if not extra.startswith(" "):
            break
        key, _, value = extra.strip().partition(" = ")
        if key == "LINK_ARGS":
            link = shlex.split(value)
    if rule != "c_LINKER" or not link:
        sys.exit(f"build.py: unexpected link rule for {REF_TARGET}: {rule}")
    return inputs, link


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    build, source, output = (os.path.abspath(a) for a in sys.argv[1:])
    os.makedirs(os.path.dirname(output), exist_ok=True)
    obj = output + ".o"
    cc = compile_args(build)
    inputs, link = link_args(build)
    for what, cmd in (("compile", cc[:1] + cc[1:] + ["-o", obj, "-c", source]),
                      ("link", ["gcc", "-m64", "-o", output, obj] + inputs
                       + link)):
        r = subprocess.run(cmd, cwd=build)
        if r.returncode:
            print(f"build.py: {what} failed:\n  cd {build} && "
                  + shlex.join(cmd), file=sys.stderr)
            sys.exit(1)


if __name__ == "__main__":
    main()
