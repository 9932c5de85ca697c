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
def refit_tight(parents, left, right, row_of, tight_lo, tight_hi, lo, hi, moved):
    """Write the boxes of the ``moved`` slots into their leaf rows and recompute the tight
    boxes of every row above them, in place; returns the rows changed (ascending).

    One pass in decreasing row order does it: in preorder a child's row is larger than its
    parent's, so a changed row marks its parent before the pass reaches it. Costs one pass
    over the row flags, not a repack.
    """
    m = len(parents)
    dirty = np.zeros(m, dtype=np.bool_)
    for i in range(len(moved)):
        s = moved[i]
        r = row_of[s] if s < len(row_of) else -1
        if r >= 0:
            for k in range(3):
                tight_lo[r, k] = lo[s, k]
                tight_hi[r, k] = hi[s, k]
            dirty[r] = True
    changed = 0
    for r in range(m - 1, -1, -1):
        if dirty[r]:
            changed += 1
            if left[r] >= 0:
                for k in range(3):
                    tight_lo[r, k] = min(tight_lo[left[r], k], tight_lo[right[r], k])
                    tight_hi[r, k] = max(tight_hi[left[r], k], tight_hi[right[r], k])
            if parents[r] >= 0:
                dirty[parents[r]] = True
    rows = np.empty(changed, dtype=np.int64)
    j = 0
    for r in range(m):
        if dirty[r]:
            rows[j] = r
            j += 1
    return rows
