#!/usr/bin/env python3
"""Writes the adversarial traces built by hand from a policy's rule (the
others in this folder come from `heaplab adversary`):

  rules.py [--rule=TEXT] pin THREADS PAGE LIVE SIZE[:SPAN]...  > NAME.rep
  rules.py [--rule=TEXT] fill THREADS PAGE LIVE SIZE[:SPAN]... > NAME.rep
  rules.py [--rule=TEXT] ladder FIRST HEADER PHASES LIVE      > NAME.rep

pin: for each thread in turn, for each size: LIVE bytes of blocks of that
size, then every block freed but one in each PAGE bytes.  An allocator
that gives each size class pages (spans, pools) of its own, and each
thread its own pages, keeps every page a survivor stands in: LIVE bytes
per size and thread, while what is live stays about one wave.  A size
written SIZE:SPAN keeps one block in each SPAN bytes instead of PAGE (a
class whose spans are longer than a page).

fill: pin, but each wave is LIVE less what the survivors of the earlier
waves hold, so what is live never passes LIVE: every wave adds its spans
to what the allocator holds while the peak stays where the first wave put
it.  Give the sizes in the order of their survivors' share of a span
(size over SPAN), smallest first: the survivors that cost the least live
bytes then shrink the most waves.

ladder: phase i asks for blocks of FIRST << i bytes with their HEADER
(request FIRST << i minus HEADER), as many as a power of two that keeps
what is live under LIVE; then every other survivor of every earlier phase
and of this one is freed.  After phase i each hole is smaller than the
next phase's block, so an address-ordered first fit puts every new block
past the end: half of LIVE more each phase (Robson's doubling).
"""
import sys

PIN = """family pin: each thread in turn, each size in turn: a wave of blocks of the
size, all freed but one in every PAGE bytes; a page, span or pool that
serves one size class (and one thread) keeps a whole wave for one block"""
FILL = """family fill: each thread in turn, each size in turn: a wave of blocks of the
size as large as the survivors leave room for under LIVE, all freed but one
in every PAGE (or SPAN) bytes; a span that serves one size class keeps its
wave for one block, and the peak of live bytes stays one wave"""
LADDER = """family ladder: block sizes double each phase; each phase frees every other
survivor of every phase, so no hole ever fits the next phase's block, and an
address-ordered first fit grows by half the live bytes every phase (Robson)"""


def pin(threads, page, live, sizes, fill=False):
    out, nid, held = [], 0, 0
    for th in range(threads):
        if threads > 1:
            out.append("t %d" % th)
        for size, span in sizes:
            wave = live - held if fill else live
            n, keep, first = max(wave // size, 2), max((span or page) // size, 1), nid
            out += ["a %d %d" % (first + i, size) for i in range(n)]
            out += ["f %d" % (first + i) for i in range(n) if i % keep]
            held += size * len(range(0, n, keep))
            nid += n
    return out


def size_span(arg):
    size, _, span = arg.partition(":")
    return int(size), int(span) if span else 0


def ladder(first_chunk, header, phases, live):
    out, nid, regions = [], 0, []
    for p in range(phases):
        chunk = first_chunk << p
        held = sum(len(ids) * size for ids, size in regions)
        n = max((live - held) // chunk, 2)
        n = 1 << (n.bit_length() - 1)
        ids = list(range(nid, nid + n))
        nid += n
        out += ["a %d %d" % (i, chunk - header) for i in ids]
        regions.append((ids, chunk))
        kept = []
        for ids, size in regions:
            out += ["f %d" % i for i in ids[0::2]]
            kept.append((ids[1::2], size))
        regions = [r for r in kept if r[0]]
    return out


def main(argv):
    rule = []
    if len(argv) > 1 and argv[1].startswith("--rule="):
        rule = ["# rule attacked: " + argv[1][len("--rule="):]]
        argv = argv[:1] + argv[2:]
    if len(argv) >= 6 and argv[1] in ("pin", "fill"):
        lines = pin(int(argv[2]), int(argv[3]), int(argv[4]), [size_span(s) for s in argv[5:]], argv[1] == "fill")
    elif len(argv) == 6 and argv[1] == "ladder":
        lines = ladder(*(int(a) for a in argv[2:]))
    else:
        sys.stderr.write("usage: rules.py [--rule=TEXT] pin|fill THREADS PAGE LIVE SIZE[:SPAN]... | ladder FIRST HEADER PHASES LIVE\n")
        return 2
    head = ["# traces/adversarial/rules.py " + " ".join(argv[1:])] + rule
    head += ["# " + l for l in {"pin": PIN, "fill": FILL, "ladder": LADDER}[argv[1]].splitlines()]
    sys.stdout.write("\n".join(head + lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
