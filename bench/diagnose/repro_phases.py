"""repro.py with each burst's two phases timed on its thread's own CPU
clock (time.thread_time: a thread waiting for its turn is not counted):
building the 20,000 dicts, and letting them go.  Prints to stderr the
mean of each over the bursts, in milliseconds, and the main thread's.
Run alone and under the recorder, it says how much the recorder slows
each phase (bench/ACCURACY.md: building about 4 times, freeing about 14).
Usage: python3 repro_phases.py [BURSTS] [PAUSE]"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import repro  # noqa: E402  (its bursts, threads and pauses, unchanged)

built = []
freed = []


def timed_burst(seed):
    t0 = time.thread_time()
    objs = [{"id": i, "name": "item-%d-%d" % (seed, i), "data": "x" * (64 + i % 200)} for i in range(20000)]
    t1 = time.thread_time()
    with repro.kept_lock:
        repro.kept.extend(objs[::1000])
    t2 = time.thread_time()
    del objs
    t3 = time.thread_time()
    built.append(t1 - t0)
    freed.append(t3 - t2)


start = time.thread_time()
repro.run(timed_burst)
print("build %.1f ms, free %.1f ms a burst (thread CPU time, mean of %d); main thread %.1f ms" % (
    1000 * sum(built) / len(built), 1000 * sum(freed) / len(freed), len(built),
    1000 * (time.thread_time() - start)), file=sys.stderr)
