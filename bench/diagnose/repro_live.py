"""repro.py with a count of the dicts its threads hold: each dict made
adds one, each burst's end takes its 20,000 off; the most held at once
goes to stderr as "peak_live_objects N".  How much of the threads' bursts
overlap, which is what makes the peak, in a run alone and in a recorded
one (bench/ACCURACY.md).  Usage: python3 repro_live.py [BURSTS] [PAUSE]"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import repro  # noqa: E402  (its bursts, threads and pauses, unchanged)

live = [0]
most = [0]


def counted_burst(seed):
    objs = []
    for i in range(20000):
        objs.append({"id": i, "name": "item-%d-%d" % (seed, i), "data": "x" * (64 + i % 200)})
        live[0] += 1
        if live[0] > most[0]:
            most[0] = live[0]
    with repro.kept_lock:
        repro.kept.extend(objs[::1000])
    live[0] -= 20000
    del objs


repro.run(counted_burst)
print("peak_live_objects %d" % most[0], file=sys.stderr)
