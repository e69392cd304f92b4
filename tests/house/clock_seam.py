#!/usr/bin/env python3
"""The clock seam: every time-based rule of a policy reads the heap's clock
through the core (hl_clock_now_ns, core/clock.c), which a replay drives from
the recording; a background thread is the core's (hl_background_*).  Lists
every clock read or timed wait in the C files under ROOT/policies:
clock_gettime, gettimeofday, time(), clock(), timespec_get, the TSC,
nanosleep/usleep/sleep and pthread_cond_timedwait; comments and string
literals do not count.

    clock_seam.py ROOT     exit 0 when the seam holds, 1 (and a list) when not
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from os_seam import calls  # noqa: E402

CALLS = (r"clock_gettime|gettimeofday|time|clock|timespec_get|__rdtsc|__rdtscp|rdtsc|"
         r"nanosleep|clock_nanosleep|usleep|sleep|pthread_cond_timedwait|pthread_create")
CALL = re.compile(r"(?<![\w.>])(?:" + CALLS + r")\s*\(")


def main():
    if len(sys.argv) != 2:
        print("usage: clock_seam.py ROOT", file=sys.stderr)
        return 2
    # (a policy's Check suite, policies/NAME/test_NAME.c, is a test program:
    # its threads and clock are the test's, not the policy's)
    bad = calls(sys.argv[1], CALL, top="policies",
                skip=lambda rel: os.path.basename(rel).startswith("test_"))
    for v in bad:
        print(f"{v}: a policy reads the clock or starts a thread itself (use hl_clock_now_ns, hl_background_*)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
