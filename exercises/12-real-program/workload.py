"""Lab 12's workload: waves of short-lived buffers with a few survivors.

Like the seeds' fragmentation reproduction, without psutil: each wave, a
few threads allocate buffers of mixed sizes; about one in twenty survives
as an "anchor", and the anchors are thinned between waves.  Run it with
PYTHONMALLOC=malloc so every object goes through the C allocator, under
`heaplab run --stats`, and compare the heap's resident bytes with the live
bytes it really holds (the bloat factor).

At the end it holds its anchors through a quiet spell of 0.3 s and prints
"quiet PID FROM TO": the spell in ms on the clock of `heaplab run
--sample-ms` (HEAPLAB_SAMPLE_T0), so the samples of the steady state can be
told from those of the interpreter's own teardown.

usage: python3 workload.py [--waves N] [--threads N] [--per-wave N] [--trim]
"""
import argparse
import ctypes
import os
import random
import threading
import time

SIZES = [64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384]


def burst(rng, count, keep):
    kept = []
    for _ in range(count):
        buf = bytearray(rng.choice(SIZES))
        if rng.random() < 0.05:
            kept.append(buf)
    keep.extend(rng.sample(kept, min(len(kept), 20)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--waves", type=int, default=8)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--per-wave", type=int, default=5000)
    ap.add_argument("--trim", action="store_true", help="call malloc_trim(0) at the end")
    args = ap.parse_args()
    rng = random.Random(42)
    anchors = []
    for wave in range(args.waves):
        per_thread = [[] for _ in range(args.threads)]
        workers = [threading.Thread(target=burst, args=(random.Random(wave * 100 + i), args.per_wave, per_thread[i]))
                   for i in range(args.threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        for kept in per_thread:
            anchors.extend(kept)
        if len(anchors) > 300:
            anchors[:] = rng.sample(anchors, 150)
        print(f"wave {wave:2d}: {len(anchors):4d} anchors, {sum(map(len, anchors)) / 1024:8.1f} KiB held by the program")
    if args.trim:
        given = ctypes.CDLL(None).malloc_trim(0)
        print(f"malloc_trim(0) returned {given}")
    t0 = int(os.environ.get("HEAPLAB_SAMPLE_T0", "0")) / 1e6
    start = time.monotonic_ns() / 1e6 - t0
    time.sleep(0.3)
    end = time.monotonic_ns() / 1e6 - t0
    print(f"quiet {os.getpid()} {start:.0f} {end:.0f}", flush=True)


if __name__ == "__main__":
    main()
