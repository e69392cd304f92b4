#!/usr/bin/env python3
"""Peak and final resident set of a program, read from outside.

    bench/diagnose/peak_final.py [NAME=VALUE ...] -- COMMAND [ARG ...]

Runs COMMAND with the NAME=VALUE settings added to the environment (an
allocator to preload, its options), reads /proc/PID/status every 10 ms
while it runs, and prints "PEAK FINAL" in MiB: the peak is the largest of
the readings and of the kernel's high-water mark (VmHWM, which no sampling
misses; it belongs to the program's own memory, begun at exec), the final
the resident set as the program exits.  The final is read with the process
held at its exit (ptrace's exit event: every free it made is done, nothing
is unmapped yet), so a program that frees its buffers in its last
milliseconds is seen after those frees; where ptrace is refused (a
sandbox), the last of the 10 ms readings stands in.  When jemalloc prints its statistics at
exit (MALLOC_CONF=...,stats_print:true) the line goes on with its
allocated, active, metadata and resident figures.  The program's own
output is discarded; its standard error is kept in a temporary file.
"""
import ctypes
import os
import re
import signal
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


PTRACE_TRACEME, PTRACE_CONT, PTRACE_SETOPTIONS = 0, 7, 0x4200
PTRACE_O_TRACEEXEC, PTRACE_O_TRACEEXIT, PTRACE_O_EXITKILL = 0x10, 0x40, 0x100000
PTRACE_EVENT_EXIT = 6

_libc = ctypes.CDLL(None, use_errno=True)
_libc.ptrace.restype = ctypes.c_long
_libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]


def _ptrace(request, pid=0, data=0):
    return _libc.ptrace(request, pid, None, ctypes.c_void_p(data))


def _trace_me():
    """In the child, before exec: its parent traces it (or, refused, not)."""
    _ptrace(PTRACE_TRACEME)


def measure(command, env, err=subprocess.DEVNULL, period=0.01, stdin=subprocess.DEVNULL, split=None):
    """Runs @command with environment @env; (peak, final, exit status) in
    bytes.  Its output is discarded, its standard error goes to @err.  With
    a dict @split, its 'peak' becomes rollup() at the largest reading."""
    child = subprocess.Popen(command, env=env, stdin=stdin, stdout=subprocess.DEVNULL, stderr=err,
                             preexec_fn=_trace_me)
    pid, traced, final = child.pid, None, None
    peak = last = 0
    while True:
        got, status = os.waitpid(pid, os.WNOHANG)
        if got == pid and (os.WIFEXITED(status) or os.WIFSIGNALED(status)):
            child.returncode = os.waitstatus_to_exitcode(status)
            break
        if got == pid and os.WIFSTOPPED(status):
            sig = os.WSTOPSIG(status)
            if traced is None:
                # the stop at exec: from here on, hold the exit and pass
                # every later exec without a signal
                traced = _ptrace(PTRACE_SETOPTIONS, pid,
                                 PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL) == 0
                sig = 0
            elif sig == signal.SIGTRAP and status >> 16:
                if status >> 16 == PTRACE_EVENT_EXIT:
                    final = resident(pid)[0]
                sig = 0
            _ptrace(PTRACE_CONT, pid, sig)
            continue
        rss, hwm = resident(pid)
        if rss:
            if split is not None and rss > last and rss > max(peak, hwm) - (1 << 20):
                split['peak'] = rollup(pid) or split.get('peak')
            last, peak = rss, max(peak, rss, hwm)
        time.sleep(period)
    if final:
        peak, last = max(peak, final), final
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
