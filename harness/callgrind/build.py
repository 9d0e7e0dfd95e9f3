#!/usr/bin/python3
"""Build a harness program (aio_poll_cost.c, aio_loop_bench.c) against a
QEMU build folder.

usage: build.py BUILD TREE SRC OUTDIR

Compiles SRC with the flags meson used for tests/unit/test-nested-aio-poll.c
(compile_commands.json) and links it the way build.ninja links that test
(its object inputs other than the test's own, and its LINK_ARGS, which hold
libqemuutil.a and the libraries it needs).  Writes OUTDIR/NAME, NAME being
SRC's name less .c, and OUTDIR/NAME-fakeclock (built with -DAPW_FAKE_CLOCK)
when SRC has a fake clock.  Adds
-DAPW_POLL_WEIGHT when TREE's aio_context_set_poll_params() takes a weight.
Runs nothing in the build folder but the compiler and the linker: no ninja,
so it never regenerates or rebuilds a shared build folder.
"""
import json
import os
import re
import shlex
import subprocess
import sys

TEST = 'tests/unit/test-nested-aio-poll'


def die(msg):
    sys.exit('apw: error: callgrind build: ' + msg)


def compile_command(build, path):
    """(directory, argv, source) of BUILD's compile command for the source
    whose name ends in path (compile_commands.json): argv less the source,
    its output, its depfile and ccache; source as the command names it."""
    with open(os.path.join(build, 'compile_commands.json')) as f:
        entries = [e for e in json.load(f) if e['file'].endswith(path)]
    if len(entries) != 1:
        die(f'no single {path} in {build}/compile_commands.json')
    out, skip, source = [], 0, None
    for a in shlex.split(entries[0]['command']):
        if skip:
            skip -= 1
        elif a in ('-MQ', '-MF', '-o'):
            skip = 1
        elif a.endswith(path):
            source = a
        elif a not in ('-MD', '-c', 'ccache'):
            out.append(a)
    if source is None:
        die(f'no {path} in its command in {build}/compile_commands.json')
    return entries[0]['directory'], out, source


def ninja_unescape(s):
    return re.sub(r'\$([ :$])', r'\1', s)


def ninja_split(s):
    """Split a ninja path list; '$ ' escapes a space."""
    return [ninja_unescape(p) for p in re.split(r'(?<!\$) +', s.strip()) if p]


def link_edge(build, target=TEST):
    """({rule's variable: value}, explicit inputs, {edge's variable: value})
    of the edge that links target (default the test)."""
    head = f'build {target}: '
    rules, edge = {}, None
    with open(os.path.join(build, 'build.ninja')) as f:
        lines = f.read().split('\n')
    for i, line in enumerate(lines):
        if line.startswith('rule '):
            name = line[5:].strip()
            rules[name] = {}
            for l in lines[i + 1:]:
                if not l.startswith(' '):
                    break
                k, _, v = l.strip().partition(' = ')
                rules[name][k] = v
        elif line.startswith(head):
            rest = line[len(head):]
            rule, _, rest = rest.partition(' ')
            explicit = re.split(r' \|\|? ', rest)[0]
            vars_ = {}
            for l in lines[i + 1:]:
                if not l.startswith(' '):
                    break
                k, _, v = l.strip().partition(' = ')
                vars_[k] = v
            edge = (rule, ninja_split(explicit), vars_)
    if edge is None:
        die(f'no "{head}" edge in {build}/build.ninja')
    rule, inputs, vars_ = edge
    if 'command' not in rules.get(rule, {}):
        die(f'no rule {rule} in {build}/build.ninja')
    return rules[rule], inputs, vars_


def link_line(rule, inputs, vars_, target):
    """(command, response file's text or None) of a link edge of
    build.ninja, its variables expanded"""
    def expand(text):
        return (text.replace('$ARGS', vars_.get('ARGS', ''))
                .replace('$LINK_ARGS', vars_.get('LINK_ARGS', ''))
                .replace('$in', ' '.join(shlex.quote(p) for p in inputs))
                .replace('$out', shlex.quote(target)))
    if 'rspfile' in rule:
        return expand(rule['command']), expand(rule['rspfile_content'])
    return expand(rule['command']), None


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    build, tree, src, outdir = (os.path.abspath(a) for a in sys.argv[1:])
    os.makedirs(outdir, exist_ok=True)

    cwd, cflags, _ = compile_command(build, TEST + '.c')
    # A tree that changed after its library was built would be measured as
    # something it is not (a shared build folder in the middle of a rebuild)
    lib = os.path.join(build, 'libqemuutil.a')
    newer = [f for f in ('util/aio-posix.c', 'util/aio-posix.h', 'util/async.c',
                         'include/block/aio.h', 'util/fdmon-poll.c',
                         'util/fdmon-io_uring.c')
             if os.path.exists(os.path.join(tree, f)) and
             os.path.getmtime(os.path.join(tree, f)) > os.path.getmtime(lib)]
    if newer:
        die(f'{tree} changed after {lib} was built ({" ".join(newer)}): '
            'rebuild it first')
    with open(os.path.join(tree, 'include/block/aio.h')) as f:
        aio_h = f.read()
    m = re.search(r'void aio_context_set_poll_params\(([^;]*)\);', aio_h)
    if not m:
        die(f'no aio_context_set_poll_params() in {tree}/include/block/aio.h')
    if re.search(r'\bweight\b', m.group(1)):
        cflags.append('-DAPW_POLL_WEIGHT')

    rule, inputs, vars_ = link_edge(build)
    command = rule['command']
    own = [p for p in inputs if p.endswith('.o') and TEST + '.p/' in p]
    others = [p for p in inputs if p not in own]
    if 'rspfile' in rule or '@$out.rsp' in command:
        die('link rules with response files are not supported')
    missing = [p for p in others + shlex.split(vars_.get('LINK_ARGS', ''))
               if (p.endswith('.o') or p.endswith('.a')) and
               not os.path.exists(os.path.join(build, p))]
    if missing:
        die(f'{build} lacks {" ".join(missing)}: build it first')

    name = os.path.splitext(os.path.basename(src))[0]
    variants = [(name, [])]
    with open(src) as f:
        if 'APW_FAKE_CLOCK' in f.read():
            variants.append((name + '-fakeclock', ['-DAPW_FAKE_CLOCK']))
    for variant, extra in variants:
        obj = os.path.join(outdir, variant + '.o')
        exe = os.path.join(outdir, variant)
        cc = cflags + extra + ['-o', obj, '-c', src]
        subprocess.run(cc, cwd=cwd, check=True)
        line, _ = link_line(rule, others + [obj], vars_, exe)
        subprocess.run(shlex.split(line), cwd=build, check=True)
        print(exe)


if __name__ == '__main__':
    main()
