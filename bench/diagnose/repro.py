"""Fragmentation repro for heaplab diagnose: 8 threads build
bursts of small objects, keep a few of each burst for good and drop the
rest; the process's RSS (from /proc/self/statm) is printed after each
burst.  Live data stays nearly flat; whether RSS does depends on the
allocator.  Usage: python3 repro.py [BURSTS] [PAUSE_SECONDS]"""
import os
import sys
import threading
import time

BURSTS = int(sys.argv[1]) if len(sys.argv) > 1 else 20
PAUSE = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
THREADS = 8
PAGE = os.sysconf("SC_PAGE_SIZE")
kept = []
kept_lock = threading.Lock()


def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE / 1e6


def burst(seed):
    objs = [{"id": i, "name": "item-%d-%d" % (seed, i), "data": "x" * (64 + i % 200)} for i in range(20000)]
    with kept_lock:
        kept.extend(objs[::1000])       # a few survivors: anchors in the heap
    del objs


def run(work):
    for b in range(BURSTS):
        threads = [threading.Thread(target=work, args=(b * THREADS + t,)) for t in range(THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        print("burst %2d: rss %.1f MB, kept %d objects" % (b, rss_mb(), len(kept)), flush=True)
        time.sleep(PAUSE)


if __name__ == "__main__":
    run(burst)
