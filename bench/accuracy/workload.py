"""The CPython program of bench/accuracy: objects of the sizes a real
program makes (tuples, strings of 40 to 400 bytes, dicts, and bytes objects
above pymalloc's 512-byte limit), built in
rounds, one in 100 kept across rounds, the rest dropped; at the end
everything is dropped, so the last RSS shows what the allocator keeps.
Usage: python3 workload.py [ROUNDS]"""
import sys

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 2
kept = []
for r in range(ROUNDS):
    rows = [(i, ("row-%d-%d " % (r, i)) * (4 + i % 24), {"k": i}) for i in range(40000)]
    blobs = [bytes(600 + i % 900) for i in range(8000)]
    kept.extend(rows[::100])
    del rows, blobs
del kept
