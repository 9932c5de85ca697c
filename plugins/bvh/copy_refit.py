"""Refitting the BVH's depth-first tight copy after objects moved, instead of repacking it.

The copy (:func:`plugins.bvh.pair_kernels.pack_tree`) is what queries and pairs read. A move
changes the tree itself only where an object left its fat box (it is reinserted there); the
copy need not follow: each object stays in the leaf row it was packed into, and the rows above
the moved leaves get their exact tight boxes again, bottom-up, like a refitting BVH. Every box
then still encloses its subtree, so every answer is exact; only the copy's rows stop mirroring
the tree's nodes (the index repacks when it must report rows, see
:meth:`plugins.bvh.index.DynamicBvh._packed`).
"""
from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def leaf_rows(row_slots, slot_capacity):
    """Per slot, its leaf row in the copy (``-1`` for a slot not in it)."""
    row_of = np.full(slot_capacity, -1, dtype=np.int64)
    for r in range(len(row_slots)):
        s = row_slots[r]
        if s >= 0:
            row_of[s] = r
    return row_of


@numba.njit(cache=True, nogil=True)
def refit(parents, left, right, row_of, tight_lo, tight_hi, box, area, lo, hi, moved):
    """Write the boxes of the ``moved`` slots into their leaf rows and recompute every row
    above them (``tight_lo``, ``tight_hi``, ``box``, ``area`` in place).

    Rows on the moved leaves' paths are marked first, then refitted in decreasing row order:
    in preorder a child's row is larger than its parent's. Costs the paths plus one pass over
    the row flags, not a repack.
    """
    m = len(parents)
    dirty = np.zeros(m, dtype=np.bool_)
    for i in range(len(moved)):
        s = moved[i]
        r = row_of[s] if s < len(row_of) else -1
        if r < 0:
            continue
        for k in range(3):
            tight_lo[r, k] = lo[s, k]
            tight_hi[r, k] = hi[s, k]
        dirty[r] = True
        p = parents[r]
        while p >= 0 and not dirty[p]:
            dirty[p] = True
            p = parents[p]
    for r in range(m - 1, -1, -1):
        if not dirty[r]:
            continue
        if left[r] >= 0:
            a = left[r]
            b = right[r]
            for k in range(3):
                tight_lo[r, k] = min(tight_lo[a, k], tight_lo[b, k])
                tight_hi[r, k] = max(tight_hi[a, k], tight_hi[b, k])
        for k in range(3):
            box[r, k] = tight_lo[r, k]
            box[r, 3 + k] = tight_hi[r, k]
        dx = tight_hi[r, 0] - tight_lo[r, 0]
        dy = tight_hi[r, 1] - tight_lo[r, 1]
        dz = tight_hi[r, 2] - tight_lo[r, 2]
        area[r] = 2.0 * (dx * dy + dy * dz + dz * dx)
