#!/usr/bin/python3
"""A diagnostic build of the series with another price of a wakeup compiled in

usage: price_build.py [--relink TARGET]... BUILD TREE CPU_NS LATENCY_NS OUT
       price_build.py [--relink TARGET]... --check BUILD TREE OUT

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
harness/callgrind/build.py can build a program against it.  --relink TARGET
(e.g. qemu-system-x86_64 of a full build) links TARGET again in OUT/build
with BUILD's own link command (build.ninja), so that ./apw bench --variant
price=OUT/build:... runs it.  Nothing in BUILD or TREE changes.  Not a patch
and not proposed: a diagnostic.

--check builds it twice, with the tree's own constants and with two others,
and fails unless the first object's code (.text) is the build's own byte for
byte and the second's differs, and the same for each TARGET relinked: the
copy changes the constants and nothing else.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

# The compile and link commands: harness/callgrind/build.py, imported as a
# module of the package harness/callgrind (as harness/replay/build.py does)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..'))
from callgrind import build as cgbuild  # noqa: E402

SRC = 'util/aio-posix.c'
OBJ = 'libqemuutil.a.p/util_aio-posix.c.o'
CONSTANTS = ('AIO_POLL_WAKEUP_NS', 'AIO_POLL_WAKEUP_LATENCY_NS')


def die(msg):
    sys.exit('apw: error: price build: ' + msg)


def definition(header, name):
    """The pattern of name's one definition as a number in header"""
    pat = re.compile(r'^(#define %s )(\d+)$' % name, re.M)
    if len(pat.findall(header)) != 1:
        die(f'{name} is not defined once as a number in util/aio-posix.h')
    return pat


def set_constants(header, values):
    """header's text with each of CONSTANTS defined as its value in values;
    each must be defined exactly once, as a number"""
    for name, value in zip(CONSTANTS, values):
        header = definition(header, name).sub(
            lambda m: m.group(1) + str(value), header)
    return header


def tree_constants(tree):
    with open(os.path.join(tree, 'util/aio-posix.h')) as f:
        header = f.read()
    return [int(definition(header, name).search(header).group(2))
            for name in CONSTANTS]


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


def unfold(dest, path):
    """Make each folder on path (relative to dest) a folder of dest's own,
    of links to the entries of the build's, so that what is written there
    never reaches the build"""
    here = dest
    for part in path.split('/')[:-1]:
        here = os.path.join(here, part)
        if os.path.islink(here):
            real = os.readlink(here)
            if not os.path.isdir(real):
                die(f'{real} is not a folder')
            os.unlink(here)
            os.mkdir(here)
            for name in os.listdir(real):
                os.symlink(os.path.join(real, name), os.path.join(here, name))
        elif not os.path.isdir(here):
            die(f'{here} is not a folder')


def relink(dest, target):
    """Link target again in dest (a link farm of a build), in place of its
    link to the build's own"""
    rule, inputs, vars_ = cgbuild.link_edge(dest, target)
    command, rsp = cgbuild.link_line(rule, inputs, vars_, target)
    unfold(dest, target)
    path = os.path.join(dest, target)
    if os.path.lexists(path):
        if not os.path.islink(path):
            die(f'{path} is not a link into the build')
        os.unlink(path)
    if rsp is not None:
        with open(os.path.join(dest, target + '.rsp'), 'w') as f:
            f.write(rsp)
    subprocess.run(shlex.split(command), cwd=dest, check=True)


def price_build(build, tree, cpu, latency, out, targets=()):
    """OUT/build, with util/aio-posix.c's object priced at cpu, latency,
    and each of targets linked again with it"""
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
    cwd, args, orig = cgbuild.compile_command(build, SRC)
    # "aio-posix.h" comes from the copy's folder first; the tree's util/
    # for the folder's other headers; __FILE__ (assertions) as the build
    # spells it, so that the strings, and the code that points to them,
    # stay the build's: the copy's as the command names the source, the
    # tree's headers relative to the build, as ccache gives them under
    # CCACHE_BASEDIR ($APW_WORK, harness/build.sh; --check fails where
    # the build spelt them otherwise)
    args += ['-iquote', os.path.join(tree, 'util'),
             '-fmacro-prefix-map=%s/=%s' % (os.path.join(out, 'src'),
                                            orig[:-len(SRC)]),
             '-fmacro-prefix-map=%s/=%s/' % (tree, os.path.relpath(tree, cwd)),
             '-o', os.path.join(dest, OBJ), '-c',
             os.path.join(src, 'aio-posix.c')]
    subprocess.run(args, cwd=cwd, check=True)
    for target in targets:
        relink(dest, target)
    # what ./apw bench's report says of the build (bench_tree_rev)
    with open(os.path.join(dest, 'price-build.txt'), 'w') as f:
        f.write(f'{CONSTANTS[0]} {cpu}, {CONSTANTS[1]} {latency} '
                f'(harness/loopbench/price_build.py from {build})\n')
    return dest


def text(obj):
    """The bytes of obj's .text section"""
    with tempfile.NamedTemporaryFile() as t:
        subprocess.run(['objcopy', '-O', 'binary', '--only-section=.text',
                        obj, t.name], check=True)
        return t.read()


def check(build, tree, out, targets=()):
    files = [OBJ] + list(targets)
    for f in files:
        if not os.path.isfile(os.path.join(build, f)):
            die(f'{build} has no {f}')
    own = [text(os.path.join(build, f)) for f in files]
    if not all(own):
        die(f'no .text in {build}/{OBJ} or a target')
    values = tree_constants(tree)
    same = price_build(build, tree, *values, os.path.join(out, 'same'),
                       targets)
    other = [v * 3 + 7 for v in values]
    diff = price_build(build, tree, *other, os.path.join(out, 'other'),
                       targets)
    for f, code in zip(files, own):
        if text(os.path.join(same, f)) != code:
            die(f'with the tree\'s own constants the code of {f} differs '
                'from the build\'s')
        if text(os.path.join(diff, f)) == code:
            die(f'with other constants the code of {f} is the build\'s')
    print(f'price build: the tree\'s constants {values} give the build\'s '
          f'code, {other} another ({", ".join(files)})')


def main():
    a, targets = sys.argv[1:], []
    while len(a) > 1 and a[0] == '--relink':
        targets.append(a[1])
        a = a[2:]
    if len(a) == 4 and a[0] == '--check':
        check(*(os.path.abspath(p) for p in a[1:]), targets)
    elif len(a) == 5:
        try:
            cpu, latency = int(a[2]), int(a[3])
        except ValueError:
            die('CPU_NS and LATENCY_NS are numbers of ns')
        if cpu < 1 or latency < 0:
            die('CPU_NS must be at least 1 and LATENCY_NS at least 0')
        print(price_build(a[0], a[1], cpu, latency, a[4], targets))
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main()
