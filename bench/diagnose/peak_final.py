#!/usr/bin/env python3
"""Peak and final resident set of a program, read from outside.

    bench/diagnose/peak_final.py [NAME=VALUE ...] -- COMMAND [ARG ...]

Runs COMMAND with the NAME=VALUE settings added to the environment (an
allocator to preload, its options), reads /proc/PID/status every 10 ms
while it runs, and prints "PEAK FINAL" in MiB: the peak is the largest of
the readings and of the kernel's high-water mark (VmHWM, which no sampling
misses; it belongs to the program's own memory, begun at exec), the final
the last reading before the process ended.  When jemalloc prints its statistics at
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


def resident(pid):
    """VmRSS and VmHWM of process @pid in bytes, (0, 0) once it is gone."""
    rss = hwm = 0
    try:
        with open(f'/proc/{pid}/status') as status:
            for line in status:
                if line.startswith('VmRSS:'):
                    rss = int(line.split()[1]) * 1024
                elif line.startswith('VmHWM:'):
                    hwm = int(line.split()[1]) * 1024
    except (OSError, IndexError, ValueError):
        pass              # between exit and reaping
    return rss, hwm


def rollup(pid):
    """The anonymous and file-backed resident bytes of @pid (smaps_rollup)."""
    parts = {'Anonymous:': 0, 'Rss:': 0}
    try:
        with open(f'/proc/{pid}/smaps_rollup') as f:
            for line in f:
                word = line.split()
                if word and word[0] in parts:
                    parts[word[0]] = int(word[1]) * 1024
    except (OSError, IndexError, ValueError):
        return None
    return {'anonymous': parts['Anonymous:'], 'file': parts['Rss:'] - parts['Anonymous:']}


def measure(command, env, err=subprocess.DEVNULL, period=0.01, stdin=subprocess.DEVNULL, split=None):
    """Runs @command with environment @env; (peak, final, exit status) in
    bytes.  Its output is discarded, its standard error goes to @err.  With
    a dict @split, its 'peak' becomes rollup() at the largest reading."""
    child = subprocess.Popen(command, env=env, stdin=stdin, stdout=subprocess.DEVNULL, stderr=err)
    peak = last = 0
    while child.poll() is None:
        rss, hwm = resident(child.pid)
        if rss:
            if split is not None and rss > last and rss > max(peak, hwm) - (1 << 20):
                split['peak'] = rollup(child.pid) or split.get('peak')
            last, peak = rss, max(peak, rss, hwm)
        time.sleep(period)
    return peak, last, child.returncode


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
    with tempfile.TemporaryFile(mode='w+') as err:
        peak, last, status = measure(argv[split + 1:], env, err)
        err.seek(0)
        text = err.read()
    mib = 1 << 20
    line = f'{peak / mib:.1f} {last / mib:.1f}'
    found = re.search(r'Allocated: (\d+), active: (\d+), metadata: (\d+).*?resident: (\d+)', text)
    if found:
        a, act, meta, res = (int(x) / mib for x in found.groups())
        line += f' allocated {a:.1f} active {act:.1f} metadata {meta:.1f} resident {res:.1f}'
    print(line)
    return status


if __name__ == '__main__':
    sys.exit(main(sys.argv))
