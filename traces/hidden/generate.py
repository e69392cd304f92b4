#!/usr/bin/env python3
"""Writes the hidden traces of the malloc lab (the instructor's kit only).

    python3 traces/hidden/generate.py traces/hidden

Each trace is a malloc-lab .rep in the classic header style (every trace
counts in utilization and throughput) that frees every block it allocates,
drawn from a fixed seed so that the files are the same on every run.  They
test what the public set tests, with other sizes and orders, so that a
policy tuned to the public traces is graded on traces it has not seen.
"""
import random
import sys


def write(path, ops):
    ids = 1 + max(int(op.split()[1]) for op in ops)
    with open(path, "w") as f:
        f.write("20000\n%d\n%d\n1\n" % (ids, len(ops)))
        f.write("\n".join(ops) + "\n")


def random_mix(rng, n_ids, max_size):
    """Mallocs and frees in random order, every id allocated then freed."""
    events = [("a", i) for i in range(n_ids)] + [("f", i) for i in range(n_ids)]
    ops, live, pending = [], set(), list(range(n_ids))
    rng.shuffle(pending)
    while pending or live:
        if pending and (not live or rng.random() < 0.55):
            i = pending.pop()
            live.add(i)
            ops.append("a %d %d" % (i, rng.randint(1, max_size)))
        else:
            i = rng.choice(sorted(live))
            live.remove(i)
            ops.append("f %d" % i)
    assert len(ops) == len(events)
    return ops


def binary(rng, pairs):
    """Small and large blocks alternate; the small ones go, then larger
    requests come that fit only where two neighbours merge."""
    ops, small, i = [], [], 0
    for _ in range(pairs):
        ops.append("a %d %d" % (i, rng.choice((16, 24, 32))))
        small.append(i)
        ops.append("a %d %d" % (i + 1, rng.randint(100, 140)))
        i += 2
    for s in small:
        ops.append("f %d" % s)
    big = []
    for _ in range(pairs // 2):
        ops.append("a %d %d" % (i, rng.randint(150, 260)))
        big.append(i)
        i += 1
    for k in range(i):
        if k not in small:
            ops.append("f %d" % k)
    return ops


def realloc_growth(rng, blocks, steps):
    """Blocks grown by realloc a little at a time, with short-lived small
    blocks between the steps."""
    ops, size, nxt = [], {}, blocks
    for b in range(blocks):
        size[b] = rng.randint(8, 64)
        ops.append("a %d %d" % (b, size[b]))
    for _ in range(steps):
        b = rng.randrange(blocks)
        size[b] += rng.randint(16, 200)
        ops.append("r %d %d" % (b, size[b]))
        ops.append("a %d %d" % (nxt, rng.randint(8, 48)))
        ops.append("f %d" % nxt)
        nxt += 1
    for b in range(blocks):
        ops.append("f %d" % b)
    return ops


def coalescing(rng, rounds, run):
    """Runs of equal blocks freed in alternation, then the rest, then
    requests the size of merged neighbours."""
    ops, i = [], 0
    for _ in range(rounds):
        size = rng.choice((32, 48, 64, 96))
        ids = list(range(i, i + run))
        i += run
        for k in ids:
            ops.append("a %d %d" % (k, size))
        for k in ids[::2]:
            ops.append("f %d" % k)
        for k in ids[1::2]:
            ops.append("f %d" % k)
        merged = list(range(i, i + run // 3))
        i += run // 3
        for k in merged:
            ops.append("a %d %d" % (k, 3 * size))
        for k in merged:
            ops.append("f %d" % k)
    return ops


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    write(out + "/hidden-random-bal.rep", random_mix(random.Random(101), 1500, 3000))
    write(out + "/hidden-binary-bal.rep", binary(random.Random(102), 800))
    write(out + "/hidden-realloc-bal.rep", realloc_growth(random.Random(103), 40, 600))
    write(out + "/hidden-coalescing-bal.rep", coalescing(random.Random(104), 30, 60))


if __name__ == "__main__":
    main()
