#!/usr/bin/python3
"""Per-function instruction deltas between two callgrind dumps.

usage: fndiff.py BASE_DUMP BASE_CALLS SERIES_DUMP SERIES_CALLS [TOP]

Runs callgrind_annotate on each dump, takes the self cost (Ir) of each
file:function, divides it by the number of measured aio_poll() calls and
prints a markdown table of the TOP (default 12) largest differences.  Code
inlined from a header shows as header:caller, as callgrind_annotate has it.
Paths are cut down to what follows the build folder, so that the base's and
the series' entries match.
"""
import re
import subprocess
import sys

LINE = re.compile(r'^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*?):(\S+)(?:\s+\[.*\])?$')


def costs(dump, calls):
    out = subprocess.run(['callgrind_annotate', '--inclusive=no',
                          '--threshold=100', '--auto=no', dump],
                         capture_output=True, text=True, check=True).stdout
    total, res = None, {}
    for line in out.splitlines():
        if line.endswith('PROGRAM TOTALS'):
            total = int(line.split()[0].replace(',', ''))
            continue
        m = LINE.match(line)
        if not m:
            continue
        ir, path, fn = int(m.group(1).replace(',', '')), m.group(2), m.group(3)
        if total is not None and ir == total:
            continue            # the callers of main(), which hold no cost
        path = re.sub(r'^.*/build-[^/]*/(\.\./src/)?(\./)?', '', path)
        path = re.sub(r'^.*/harness/callgrind/', '', path)
        key = f'{path}:{fn}'
        res[key] = res.get(key, 0) + ir / calls
    return res


def main():
    if len(sys.argv) not in (5, 6):
        sys.exit(__doc__)
    base = costs(sys.argv[1], int(sys.argv[2]))
    series = costs(sys.argv[3], int(sys.argv[4]))
    top = int(sys.argv[5]) if len(sys.argv) == 6 else 12
    keys = sorted(set(base) | set(series),
                  key=lambda k: -abs(series.get(k, 0) - base.get(k, 0)))
    print('| file:function (self) | base Ir/aio_poll | series Ir/aio_poll '
          '| delta |')
    print('| --- | ---: | ---: | ---: |')
    for k in keys[:top]:
        b, s = base.get(k, 0), series.get(k, 0)
        if abs(s - b) < 0.05:
            break
        print(f'| `{k}` | {b:.1f} | {s:.1f} | {s - b:+.1f} |')
    b, s = sum(base.values()), sum(series.values())
    print(f'| all | {b:.1f} | {s:.1f} | {s - b:+.1f} |')


if __name__ == '__main__':
    main()
