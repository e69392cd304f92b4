#!/usr/bin/env python3
"""picture_geometry.py [--max-width PX] [--marks] LAYOUT.json...: is each picture readable?

Each argument is Graphviz's own layout of one picture (`dot -Tjson`).  A
picture fails when

  - it is wider than PX pixels (1600 by default) at its natural size: dot
    lays out in points and renders a PNG at 96 pixels per inch, 72 points
    to the inch, with a 4-point margin each side (what `dot -Tpng` gives);
  - the box of a piece of text (a node's or a cell's label, a cluster's
    title, an edge's label) is crossed by an edge: by its curve or by its
    arrowhead;
  - with --marks, a head's letter ("\u2192 B", an edge drawn as marks) marks no cell:
    no text is "B", "B1", "B2", ... (the cells it reaches were left out;
    the legend's example "\u2192 B" excepted).

Text boxes come from the "T" drawing operations (position, alignment,
width; the height from the font size of the "F" before it: from the
baseline a fifth of the size down to three quarters of it up, the part a
glyph covers).  Edge curves are the "b" operations (cubic Béziers),
sampled finely, and arrowheads the polygons of the head and tail drawing.
A box is shrunk by half a point on each side so that a curve only grazing
a letter's corner is not a failure.

Prints one line per failure (file, what, where) and exits 1 when there was
any, 2 on input it cannot read, 0 when every picture is readable.
"""
import json
import sys

PX_PER_PT = 96.0 / 72.0
MARGIN_PT = 4.0
SHRINK = 0.5
STEPS = 24


def texts(ops, where):
    """Text boxes (x0, y0, x1, y1, text, where) of a list of xdot operations."""
    size = 14.0
    out = []
    for op in ops or []:
        kind = op.get("op")
        if kind == "F":
            size = float(op.get("size", size))
        elif kind == "T":
            text = op.get("text", "")
            if not text.strip():
                continue
            x, y = op["pt"]
            w = float(op.get("width", 0))
            align = op.get("align", "c")
            x0 = x - w / 2 if align == "c" else x if align == "l" else x - w
            box = (x0 + SHRINK, y - 0.2 * size + SHRINK, x0 + w - SHRINK, y + 0.75 * size - SHRINK)
            out.append(box + (text, where))
    return out


def bezier(points):
    """Segments approximating a piecewise cubic Bézier (3n + 1 points)."""
    segs = []
    for i in range(0, len(points) - 3, 3):
        p0, p1, p2, p3 = points[i:i + 4]
        prev = p0
        for k in range(1, STEPS + 1):
            t = k / STEPS
            u = 1 - t
            cur = (u * u * u * p0[0] + 3 * u * u * t * p1[0] + 3 * u * t * t * p2[0] + t * t * t * p3[0],
                   u * u * u * p0[1] + 3 * u * u * t * p1[1] + 3 * u * t * t * p2[1] + t * t * t * p3[1])
            segs.append((prev, cur))
            prev = cur
    return segs


def polygon(points):
    return [(points[i], points[(i + 1) % len(points)]) for i in range(len(points))]


def edge_segments(edge):
    segs = []
    for key in ("_draw_", "_hdraw_", "_tdraw_"):
        for op in edge.get(key) or []:
            if op.get("op") == "b" or op.get("op") == "B":
                segs += bezier(op["points"])
            elif op.get("op") in ("p", "P", "L"):
                pts = op["points"]
                segs += polygon(pts) if op["op"] != "L" else [(pts[i], pts[i + 1]) for i in range(len(pts) - 1)]
    return segs


def crosses(seg, box):
    """Whether segment seg meets the open rectangle box (Liang-Barsky)."""
    (x0, y0), (x1, y1) = seg
    bx0, by0, bx1, by1 = box[:4]
    if bx0 >= bx1 or by0 >= by1:
        return False
    dx, dy = x1 - x0, y1 - y0
    t0, t1 = 0.0, 1.0
    for p, q in ((-dx, x0 - bx0), (dx, bx1 - x0), (-dy, y0 - by0), (dy, by1 - y0)):
        if p == 0:
            if q <= 0:
                return False
        else:
            r = q / p
            if p < 0:
                if r > t1:
                    return False
                t0 = max(t0, r)
            else:
                if r < t0:
                    return False
                t1 = min(t1, r)
    return t0 < t1


def name_of(objects, i):
    o = objects[i] if 0 <= i < len(objects) else {}
    return o.get("name", "?")


def check(path, max_width, marks=False):
    with open(path) as f:
        g = json.load(f)
    bad = []
    x0, y0, x1, y1 = (float(v) for v in g["bb"].split(","))
    width = round((x1 - x0 + 2 * MARGIN_PT) * PX_PER_PT)
    if width > max_width:
        bad.append("%s: %d px wide (at most %d)" % (path, width, max_width))
    objects = g.get("objects", [])
    boxes = []
    for o in objects:
        for key in ("_draw_", "_ldraw_"):
            boxes += texts(o.get(key), o.get("name", "?"))
    for e in g.get("edges", []):
        for key in ("_ldraw_", "_hldraw_", "_tldraw_"):
            boxes += texts(e.get(key), "label of %s -> %s" % (name_of(objects, e.get("tail", -1)),
                                                               name_of(objects, e.get("head", -1))))
    for e in g.get("edges", []):
        segs = edge_segments(e)
        if not segs:
            continue
        lo_x = min(min(a[0], b[0]) for a, b in segs)
        hi_x = max(max(a[0], b[0]) for a, b in segs)
        lo_y = min(min(a[1], b[1]) for a, b in segs)
        hi_y = max(max(a[1], b[1]) for a, b in segs)
        for box in boxes:
            if box[2] < lo_x or box[0] > hi_x or box[3] < lo_y or box[1] > hi_y:
                continue
            if any(crosses(s, box) for s in segs):
                bad.append("%s: edge %s -> %s crosses the text \"%s\" of %s at (%.0f, %.0f)" % (
                    path, name_of(objects, e.get("tail", -1)), name_of(objects, e.get("head", -1)),
                    box[4], box[5], (box[0] + box[2]) / 2, (box[1] + box[3]) / 2))
    words = set(b[4].strip() for b in boxes)
    for b in boxes if marks else []:
        text = b[4].strip()
        if b[5].startswith("legend") or not text.startswith("\u2192 ") or not text[2:].isalpha():
            continue
        letter = text[2:]
        if not any(w == letter or (w.startswith(letter) and w[len(letter):].isdigit()) for w in words):
            bad.append("%s: the head %s of %s marks no cell" % (path, text, b[5]))
    return bad


def main(argv):
    max_width = 1600
    args = argv[1:]
    if len(args) >= 2 and args[0] == "--max-width":
        max_width = int(args[1])
        args = args[2:]
    marks = bool(args) and args[0] == "--marks"
    args = args[1:] if marks else args
    if not args:
        print("usage: picture_geometry.py [--max-width PX] [--marks] LAYOUT.json...", file=sys.stderr)
        return 2
    failures = 0
    for path in args:
        try:
            bad = check(path, max_width, marks)
        except (OSError, ValueError, KeyError, TypeError) as err:
            print("%s: cannot read the layout: %s" % (path, err), file=sys.stderr)
            return 2
        for line in bad:
            print(line)
        failures += len(bad)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
