#!/usr/bin/env python3
"""Meep's process boxes and the neighbour pairs they imply, from Meep's own chunk layout.

    h5dump chunk-layout.h5 | tools/record/meep-layout.py RES > expected/chunk-layout.txt

Input: `h5dump` of the file written by Meep's `structure::dump_chunk_layout` (datasets
`gv_origins`: each chunk's origin, x y z in Meep's length units; `gv_nums`: its size in pixels)
from an untraced twin run without PML (tools/record/inputs/waveguide.ctl, `layout-only?=true
pml?=false`): Meep then makes exactly one chunk per process, listed in rank order (structure.cpp,
choose_chunkdivision: the binary partition's leaves get process ids left to right). RES is the
resolution (pixels per unit). Output, independent of tracelogic:

    box RANK X0 X1 Y0 Y1 [Z0 Z1]      the rank's box in pixels (half-open)
    face A B AREA                     boxes A < B share a face of AREA pixels (a line in 2-D)
    corner A B                        boxes A < B touch only along an edge or at a corner
"""
import re, sys

def datasets(text):
    out = {}
    for m in re.finditer(r'DATASET "(\w+)".*?DATA \{(.*?)\}', text, re.S):
        body = re.sub(r"\(\d+\):", " ", m.group(2))
        out[m.group(1)] = [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", body)]
    return out

def main():
    res = float(sys.argv[1])
    d = datasets(sys.stdin.read())
    org, num = d["gv_origins"], d["gv_nums"]
    n = len(num) // 3
    dims = [k for k in range(3) if any(num[3 * i + k] > 0 for i in range(n))]
    boxes = []
    for i in range(n):
        b = []
        for k in dims:
            lo = round(org[3 * i + k] * res)
            b.append((lo, lo + int(num[3 * i + k])))
        boxes.append(b)
    # Shift so that the cell starts at pixel 0 in every dimension.
    mins = [min(b[k][0] for b in boxes) for k in range(len(dims))]
    boxes = [[(lo - mins[k], hi - mins[k]) for k, (lo, hi) in enumerate(b)] for b in boxes]
    for r, b in enumerate(boxes):
        print("box", r, " ".join(f"{lo} {hi}" for lo, hi in b))
    for a in range(n):
        for c in range(a + 1, n):
            touch, area, flat = True, 1, 0
            for (l1, h1), (l2, h2) in zip(boxes[a], boxes[c]):
                ov = min(h1, h2) - max(l1, l2)
                if ov < 0:
                    touch = False
                    break
                if ov == 0:
                    flat += 1
                else:
                    area *= ov
            if not touch:
                continue
            if flat == 1:
                print("face", a, c, area)
            elif flat > 1:
                print("corner", a, c)

main()
