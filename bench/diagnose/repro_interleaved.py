"""The bursts of repro.py built in one thread, in turns: CONC bursts are
being built at once, each adding CHUNK dicts in its turn; a burst that is
done keeps one dict in 1,000 and lets the rest go, and the next starts.
With no threads, the order of the blocks is the same every run, so the
model of pymalloc can be held against the real one at a known
interleaving (bench/ACCURACY.md).
Usage: python3 repro_interleaved.py CONC CHUNK"""
import sys

CONC = int(sys.argv[1])
CHUNK = int(sys.argv[2])
kept = []


def burst(seed):
    objs = []
    for i in range(20000):
        objs.append({"id": i, "name": "item-%d-%d" % (seed, i), "data": "x" * (64 + i % 200)})
        if i % CHUNK == CHUNK - 1:
            yield
    kept.extend(objs[::1000])
    del objs
    yield


for b in range(2):
    waiting = [burst(b * 8 + t) for t in range(8)]
    building = [waiting.pop(0) for _ in range(min(CONC, len(waiting)))]
    while building:
        for g in list(building):
            try:
                next(g)
            except StopIteration:
                building.remove(g)
                if waiting:
                    building.append(waiting.pop(0))
