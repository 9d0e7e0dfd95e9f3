#!/usr/bin/python3
"""A diagnostic build of the series with another price of a wakeup compiled in

usage: price_build.py BUILD TREE CPU_NS LATENCY_NS OUT
       price_build.py --check BUILD TREE OUT

The policy of patches 9-16 prices a blocking wakeup with two constants of
util/aio-posix.h, AIO_POLL_WAKEUP_NS (its CPU, 8000 ns in the tree) and
AIO_POLL_WAKEUP_LATENCY_NS (its latency, 10000 ns).  To ask what a host's own
price would change (results/loopbench-p16-intel/, step 3), this makes
OUT/build: a build folder that is BUILD (a unit or full build of TREE) but
for util/aio-posix.c's object, compiled again with BUILD's own command
(compile_commands.json) from a copy of util/aio-posix.[ch] in OUT/src/util
whose two constants are CPU_NS and LATENCY_NS.  Everything else in OUT/build
is a symbolic link into BUILD (libqemuutil.a, a thin archive, is copied, and
its folder of objects is a folder of links), so
harness/callgrind/build.py can build a program against it.  Nothing in BUILD
or TREE changes.  Not a patch and not proposed: a diagnostic.

--check builds it twice, with the tree's own constants and with two others,
and fails unless the first object's code (.text) is the build's own byte for
byte and the second's differs: the copy changes the constants and nothing
else.
"""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

SRC = 'util/aio-posix.c'
OBJ = 'libqemuutil.a.p/util_aio-posix.c.o'
CONSTANTS = ('AIO_POLL_WAKEUP_NS', 'AIO_POLL_WAKEUP_LATENCY_NS')


def die(msg):
    sys.exit('apw: error: price build: ' + msg)


def set_constants(header, values):
    """header's text with each of CONSTANTS defined as its value in values;
    each must be defined exactly once, as a number"""
    for name, value in zip(CONSTANTS, values):
        pat = re.compile(r'^(#define %s )(\d+)$' % name, re.M)
        if len(pat.findall(header)) != 1:
            die(f'{name} is not defined once as a number in util/aio-posix.h')
        header = pat.sub(lambda m: m.group(1) + str(value), header)
    return header


def tree_constants(tree):
    with open(os.path.join(tree, 'util/aio-posix.h')) as f:
        header = f.read()
    out = []
    for name in CONSTANTS:
        m = re.findall(r'^#define %s (\d+)$' % name, header, re.M)
        if len(m) != 1:
            die(f'{name} is not defined once as a number in {tree}')
        out.append(int(m[0]))
    return out


def compile_command(build):
    """(directory, argv) of BUILD's command for util/aio-posix.c, less its
    source, output, depfile and ccache"""
    with open(os.path.join(build, 'compile_commands.json')) as f:
        entries = [e for e in json.load(f) if e['file'].endswith(SRC)]
    if len(entries) != 1:
        die(f'no single {SRC} in {build}/compile_commands.json')
    out, skip = [], 0
    for a in shlex.split(entries[0]['command']):
        if skip:
            skip -= 1
        elif a in ('-MQ', '-MF', '-o', '-c'):
            skip = 1
        elif a in ('-MD', 'ccache') or a.endswith(SRC):
            pass
        else:
            out.append(a)
    return entries[0]['directory'], out


def link_farm(build, dest):
    """dest: links to every entry of build, but libqemuutil.a (copied) and
    libqemuutil.a.p (a folder of links, less util/aio-posix.c's object)"""
    if os.path.lexists(dest):
        shutil.rmtree(dest)
    os.makedirs(os.path.join(dest, 'libqemuutil.a.p'))
    for name in os.listdir(build):
        if name == 'libqemuutil.a':
            shutil.copy2(os.path.join(build, name), os.path.join(dest, name))
        elif name != 'libqemuutil.a.p':
            os.symlink(os.path.join(build, name), os.path.join(dest, name))
    objs = os.path.join(build, 'libqemuutil.a.p')
    for name in os.listdir(objs):
        if name != os.path.basename(OBJ):
            os.symlink(os.path.join(objs, name),
                       os.path.join(dest, 'libqemuutil.a.p', name))


def price_build(build, tree, cpu, latency, out):
    """OUT/build, with util/aio-posix.c's object priced at cpu, latency"""
    build, tree, out = (os.path.abspath(p) for p in (build, tree, out))
    for f in ('libqemuutil.a', OBJ, 'compile_commands.json'):
        if not os.path.exists(os.path.join(build, f)):
            die(f'{build} lacks {f}: build it first')
    # the object must be of the tree as it is (build.py checks the rest)
    for f in (SRC, 'util/aio-posix.h'):
        if os.path.getmtime(os.path.join(tree, f)) > \
                os.path.getmtime(os.path.join(build, OBJ)):
            die(f'{tree}/{f} changed after {build} was built: rebuild it')
    src = os.path.join(out, 'src', 'util')
    os.makedirs(src, exist_ok=True)
    shutil.copy2(os.path.join(tree, SRC), os.path.join(src, 'aio-posix.c'))
    with open(os.path.join(tree, 'util/aio-posix.h')) as f:
        header = set_constants(f.read(), (cpu, latency))
    with open(os.path.join(src, 'aio-posix.h'), 'w') as f:
        f.write(header)
    dest = os.path.join(out, 'build')
    link_farm(build, dest)
    cwd, args = compile_command(build)
    # "aio-posix.h" comes from the copy's folder first; the tree's util/
    # for the folder's other headers
    args += ['-iquote', os.path.join(tree, 'util'),
             '-o', os.path.join(dest, OBJ), '-c',
             os.path.join(src, 'aio-posix.c')]
    subprocess.run(args, cwd=cwd, check=True)
    with open(os.path.join(out, 'meta.txt'), 'w') as f:
        f.write(f'build {build}\ntree {tree}\n'
                f'{CONSTANTS[0]} {cpu}\n{CONSTANTS[1]} {latency}\n')
    return dest


def text(obj):
    """The bytes of obj's .text section"""
    with tempfile.NamedTemporaryFile() as t:
        subprocess.run(['objcopy', '-O', 'binary', '--only-section=.text',
                        obj, t.name], check=True)
        return t.read()


def check(build, tree, out):
    own = text(os.path.join(build, OBJ))
    if not own:
        die(f'no .text in {build}/{OBJ}')
    values = tree_constants(tree)
    same = price_build(build, tree, *values, os.path.join(out, 'same'))
    if text(os.path.join(same, OBJ)) != own:
        die('with the tree\'s own constants the object\'s code differs '
            'from the build\'s')
    other = [v * 3 + 7 for v in values]
    diff = price_build(build, tree, *other, os.path.join(out, 'other'))
    if text(os.path.join(diff, OBJ)) == own:
        die('with other constants the object\'s code is the build\'s')
    print(f'price build: the tree\'s constants {values} give the build\'s '
          f'code, {other} another')


def main():
    a = sys.argv[1:]
    if len(a) == 4 and a[0] == '--check':
        check(*(os.path.abspath(p) for p in a[1:]))
    elif len(a) == 5:
        try:
            cpu, latency = int(a[2]), int(a[3])
        except ValueError:
            die('CPU_NS and LATENCY_NS are numbers of ns')
        if cpu < 1 or latency < 0:
            die('CPU_NS must be at least 1 and LATENCY_NS at least 0')
        print(price_build(a[0], a[1], cpu, latency, a[4]))
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main()
