#!/usr/bin/env python3
"""Peak and final resident set of a program, read from outside.

    bench/diagnose/peak_final.py [NAME=VALUE ...] -- COMMAND [ARG ...]

Runs COMMAND with the NAME=VALUE settings added to the environment (an
allocator to preload, its options), reads /proc/PID/statm every 10 ms
while it runs, and prints "PEAK FINAL" in MiB: the largest reading and the
last one before the process ended.  When jemalloc prints its statistics at
exit (MALLOC_CONF=...,stats_print:true) the line goes on with its
allocated, active, metadata and resident figures.  The program's own
output is discarded; its standard error is kept in a temporary file.
"""
import os
import re
import subprocess
import sys
import tempfile
import time


def main(argv):
    if '--' not in argv or argv.index('--') == len(argv) - 1:
        sys.exit('usage: peak_final.py [NAME=VALUE ...] -- COMMAND [ARG ...]')
    split = argv.index('--')
    env = dict(os.environ)
    for setting in argv[1:split]:
        name, eq, value = setting.partition('=')
        if not eq or not name:
            sys.exit(f'peak_final.py: bad setting {setting!r} (NAME=VALUE)')
        env[name] = value
    page = os.sysconf('SC_PAGE_SIZE')
    with tempfile.TemporaryFile(mode='w+') as err:
        child = subprocess.Popen(argv[split + 1:], env=env, stdout=subprocess.DEVNULL, stderr=err)
        peak = last = 0
        while child.poll() is None:
            try:
                with open(f'/proc/{child.pid}/statm') as statm:
                    resident = int(statm.read().split()[1]) * page
            except (OSError, IndexError, ValueError):
                resident = 0      # between exit and reaping
            if resident:
                last, peak = resident, max(peak, resident)
            time.sleep(0.01)
        err.seek(0)
        text = err.read()
    mib = 1 << 20
    line = f'{peak / mib:.1f} {last / mib:.1f}'
    found = re.search(r'Allocated: (\d+), active: (\d+), metadata: (\d+).*?resident: (\d+)', text)
    if found:
        a, act, meta, res = (int(x) / mib for x in found.groups())
        line += f' allocated {a:.1f} active {act:.1f} metadata {meta:.1f} resident {res:.1f}'
    print(line)
    return child.returncode


if __name__ == '__main__':
    sys.exit(main(sys.argv))
