#!/usr/bin/env python3
"""Traces with a known optimum, for tests/programs/bound.sh.

  bound_optimum.py equal PREFIX N   N traces of 32-byte blocks with random
                                    lifetimes; the optimum is the peak of
                                    live bytes (blocks alive together form
                                    an interval graph, which is perfect)
  bound_optimum.py mixed PREFIX N   N traces of five blocks of 16, 32 or 48
                                    bytes; the optimum found by exhaustive
                                    search over 16-byte offsets
  bound_optimum.py aligned PREFIX   one trace whose optimum is above the
                                    peak of live bytes, by construction:
                                    two 16-byte blocks aligned to 64 and
                                    one of 16, alive together, need 80
                                    bytes (the aligned ones cannot share a
                                    multiple of 64) where 48 are live

Each trace is written as PREFIX-K.rep with a "# optimum BYTES" line.  The
generator is seeded, so the same traces come every time.
"""
import random
import sys


def random_lives(rng, blocks, sizes):
    """Allocation and free order of `blocks` blocks: a list of ops
    ('a', id, size) / ('f', id), some blocks never freed."""
    ops, live, made = [], [], 0
    while made < blocks or live:
        if made < blocks and (not live or rng.random() < 0.55):
            ops.append(("a", made, rng.choice(sizes)))
            live.append(made)
            made += 1
        elif live and (made < blocks or rng.random() < 0.7):
            ops.append(("f", live.pop(rng.randrange(len(live)))))
        else:
            break
    return ops


def lifetimes(ops):
    """id -> [start, end, size], end exclusive (len(ops) when never freed)."""
    life = {}
    for i, op in enumerate(ops):
        if op[0] == "a":
            life[op[1]] = [i, len(ops), op[2]]
        else:
            life[op[1]][1] = i
    return life


def peak_live(ops):
    live = peak = 0
    sizes = {}
    for op in ops:
        if op[0] == "a":
            sizes[op[1]] = op[2]
            live += op[2]
        else:
            live -= sizes[op[1]]
        peak = max(peak, live)
    return peak


def optimum(ops):
    """The least span of a layout: offsets multiples of 16, blocks alive at
    the same time apart.  Branch and bound, largest blocks first."""
    life = sorted(lifetimes(ops).values(), key=lambda l: -l[2])
    best = [sum(l[2] for l in life)]
    placed = []

    def conflicts(l, off):
        return any(p[0] < l[1] and l[0] < p[1] and off < p[3] + p[2] and p[3] < off + l[2] for p in placed)

    def go(i, span):
        if span >= best[0]:
            return
        if i == len(life):
            best[0] = span
            return
        l = life[i]
        for off in range(0, best[0] - l[2] + 1, 16):
            if not conflicts(l, off):
                placed.append(l + [off])
                go(i + 1, max(span, off + l[2]))
                placed.pop()

    go(0, 0)
    return best[0]


def write(path, ops, opt):
    with open(path, "w") as f:
        f.write("# optimum %d\n" % opt)
        for op in ops:
            f.write("a %d %d\n" % op[1:] if op[0] == "a" else "f %d\n" % op[1])


def main():
    kind, prefix = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    rng = random.Random(20261203)
    if kind == "equal":
        for k in range(n):
            ops = random_lives(rng, 40, [32])
            write("%s-%d.rep" % (prefix, k), ops, peak_live(ops))
        return
    if kind == "aligned":
        with open(prefix + ".rep", "w") as f:
            f.write("# optimum 80\na 0 16\nm 1 64 16\nm 2 64 16\nf 0\nf 1\nf 2\n")
        return
    for k in range(n):
        ops = random_lives(rng, 5, [16, 32, 48])
        write("%s-%d.rep" % (prefix, k), ops, optimum(ops))


if __name__ == "__main__":
    main()
