"""A CPython program of many small objects, for diagnose's time and memory:
ROUNDS times (default 4) it builds 600,000 one-tuples and keeps one in 200.

    python3 bench/diagnose/tuples.py [ROUNDS]
"""
import sys

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 4
keep = []
for _ in range(rounds):
    objs = [(i,) for i in range(600000)]
    keep.extend(objs[::200])
    del objs
print(len(keep))
