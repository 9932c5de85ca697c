"""Compiled bulk build of an empty octree: a top-down partition instead of one sink per object.

The placement rule of :mod:`.tree_kernels` decides, for any set of objects, one tree whatever
order they arrive in: an object descends into the child octant holding its centre while it fits
that child's loose bounds and the node may split, except that it stops at a node through which
no other object passes (a leaf holding one object is not split). So a build does not have to
insert objects one by one. It takes the objects of a node as one contiguous range of an array,
keeps those that stop there, and partitions the others by octant into contiguous sub-ranges,
one per child — a most-significant-digit radix sort on the octant path, carried out with the
very same comparisons (:func:`.tree_kernels.centre_child`) a sink makes, so the tree is
identical to the one repeated insertion builds.

Why it is faster: the caller presorts the objects (:func:`presort_keys`) so that nearly every
range is already in the order the partition wants — a node's own objects first, then each
child's in octant order — and the partition then only reads: the bounds are copied once in
that order and read sequentially level after level, nothing is moved, and each node is touched
once and links its own objects in one pass.

The kernels copy arrays element by element rather than by slice assignment (``a[i:j] = b``):
the machine code is much the same, but numba compiles slice assignment into general
broadcasting code, which made compiling this module on a first start several times slower.
"""
from __future__ import annotations

import numba
import numpy as np

from .layout import (
    CF_ORIGIN,
    CF_SIDE,
    CI_MAX_DEPTH,
    COUNT,
    DEPTH,
    HEAD,
    IX,
    LOOSE_HI,
    LOOSE_LO,
    NEXT,
    NODE,
    PREV,
    USED,
)
from .tree_kernels import can_split, cell_size, child_axis, create_child, entered

#: Bits of a presort key that hold the depth of an object's grid cell (levels <= 15).
PRESORT_DEPTH_BITS = 4


def presort_levels(n: int) -> tuple[int, int]:
    """``(levels, index_bits)`` of the presort grid for ``n`` objects: as fine as a 63-bit key
    allows beside the cell depth and a position below ``n`` (between 1 and 15 levels)."""
    index_bits = max(1, (max(n, 2) - 1).bit_length())
    levels = (63 - PRESORT_DEPTH_BITS - index_bits) // 3
    return max(1, min(levels, 15)), index_bits


#: Marks an object that stays in the node under partition (sorted before octants 0..7).
STAYS = -1


@numba.njit(cache=True, nogil=True)
def _grow_pool(NI, NF, FREE, rows):
    """Copies of the node pool with room for at least ``rows`` rows (doubling)."""
    cap = max(2 * NI.shape[0], rows, 64)
    ni = np.full((cap, NI.shape[1]), -1, dtype=NI.dtype)
    for r in range(NI.shape[0]):  # loops, not slice assignment: see the module docstring
        for c in range(NI.shape[1]):
            ni[r, c] = NI[r, c]
    nf = np.zeros((cap, NF.shape[1]), dtype=NF.dtype)
    for r in range(NF.shape[0]):
        for c in range(NF.shape[1]):
            nf[r, c] = NF[r, c]
    free = np.zeros(cap, dtype=FREE.dtype)
    for r in range(FREE.shape[0]):
        free[r] = FREE[r]
    return ni, nf, free


@numba.njit(cache=True, nogil=True)
def _link_run(NI, OB, ci, node, slots, order, first, end):
    """Give a fresh node the objects ``slots[order[first:end]]`` as its own list, in one pass
    (what ``attach`` does one object at a time)."""
    previous = -1
    for i in range(first, end):
        obj = slots[order[i]]
        OB[obj, NODE] = node
        OB[obj, PREV] = previous
        OB[obj, NEXT] = -1
        if previous >= 0:
            OB[previous, NEXT] = obj
        previous = obj
    OB[previous, NEXT] = NI[node, HEAD]
    if NI[node, HEAD] >= 0:
        OB[NI[node, HEAD], PREV] = previous
    NI[node, HEAD] = slots[order[first]]
    NI[node, COUNT] += end - first
    entered(NI, ci, node)


@numba.njit(cache=True, nogil=True)
def build_tree(NI, NF, OB, META, FREE, ci, cf, lo, hi, slots):
    """Place ``slots`` (in any order; Morton order is fastest) into a tree that holds only its
    root. Returns the node pool ``(NI, NF, FREE)``, reallocated when it had to grow.

    ``OB`` rows of the slots must be unlinked (``-1``); ``lo``/``hi`` are only read.
    """
    n = len(slots)
    # the bounds in the given order, so nearby objects are read from nearby memory; the
    # partition then permutes only positions into this copy
    box = np.empty((n, 6))
    for i in range(n):
        s = slots[i]
        for a in range(3):
            box[i, a] = lo[s, a]
            box[i, 3 + a] = hi[s, a]
    order = np.arange(n)
    digit = np.empty(n, dtype=np.int8)
    scratch = np.empty(n, dtype=np.int64)
    # pending (node, first, end) ranges; a node pushes at most 8, so depth * 8 bounds the stack
    cap_stack = 8 * (ci[CI_MAX_DEPTH] + 2)
    st_node = np.empty(cap_stack, dtype=np.int64)
    st_first = np.empty(cap_stack, dtype=np.int64)
    st_end = np.empty(cap_stack, dtype=np.int64)
    counts = np.zeros(9, dtype=np.int64)
    starts = np.zeros(9, dtype=np.int64)
    mid = np.empty(3)
    fit_lo = np.empty((2, 3))
    fit_hi = np.empty((2, 3))
    top = 0
    if n > 0:
        st_node[0] = 0
        st_first[0] = 0
        st_end[0] = n
        top = 1
    while top > 0:
        top -= 1
        node = st_node[top]
        first = st_first[top]
        end = st_end[top]
        if end - first == 1 or not can_split(ci, cf, NI[node, DEPTH]):
            # alone in the node (no reason to split), or the node may not split: all stay
            _link_run(NI, OB, ci, node, slots, order, first, end)
            continue
        # the split planes and both children's loose bounds per axis, by the formula of
        # centre_child (child_axis), so every object takes the branch a sink would take
        child_cell = cell_size(cf, NI[node, DEPTH] + 1)
        for a in range(3):
            pix = NI[node, IX + a]
            mid[a] = cf[CF_ORIGIN + a] + (2 * pix + 1) * child_cell
            for bit in range(2):
                _, _, llo, lhi = child_axis(cf, a, pix, bit, child_cell, NF[node, LOOSE_LO + a],
                                            NF[node, LOOSE_HI + a])
                fit_lo[bit, a] = llo
                fit_hi[bit, a] = lhi
        for k in range(9):
            counts[k] = 0
        ordered = True
        previous = STAYS
        for i in range(first, end):
            r = order[i]
            octant = 0
            fits = True
            for a in range(3):
                bit = 1 if (box[r, a] + box[r, 3 + a]) * 0.5 >= mid[a] else 0
                octant |= bit << a
                if box[r, a] < fit_lo[bit, a] or box[r, 3 + a] > fit_hi[bit, a]:
                    fits = False
            d = octant if fits else STAYS
            digit[i] = d
            counts[d + 1] += 1
            if d < previous:
                ordered = False
            previous = d
        if not ordered:
            # stable counting sort of the range's positions by digit (those staying first)
            starts[0] = first
            for k in range(1, 9):
                starts[k] = starts[k - 1] + counts[k - 1]
            for i in range(first, end):
                k = digit[i] + 1
                scratch[starts[k]] = order[i]
                starts[k] += 1
            for i in range(first, end):
                order[i] = scratch[i]
        if counts[0] > 0:
            _link_run(NI, OB, ci, node, slots, order, first, first + counts[0])
        at = first + counts[0]
        if META[USED] + 8 > NI.shape[0]:
            NI, NF, FREE = _grow_pool(NI, NF, FREE, META[USED] + 8)
        for octant in range(8):
            size = counts[octant + 1]
            if size == 0:
                continue
            child = create_child(NI, NF, META, FREE, ci, cf, node, octant)
            st_node[top] = child
            st_first[top] = at
            st_end[top] = at + size
            top += 1
            at += size
    return NI, NF, FREE


@numba.njit(cache=True, inline="always")
def _spread_bits(x):
    """The low 21 bits of ``x`` moved to every third bit (one axis of a Morton code)."""
    x &= 0x1FFFFF
    x = (x | (x << 32)) & 0x1F00000000FFFF
    x = (x | (x << 16)) & 0x1F0000FF0000FF
    x = (x | (x << 8)) & 0x100F00F00F00F00F
    x = (x | (x << 4)) & 0x10C30C30C30C30C3
    x = (x | (x << 2)) & 0x1249249249249249
    return x


@numba.njit(cache=True, nogil=True)
def presort_keys(cf, lo, hi, slots, levels, index_bits):
    """Keys whose ascending order is (nearly) the order :func:`partition_into` wants.

    A box's deepest enclosing cell on a ``2^levels`` grid over the root cube is the common
    prefix of the Morton codes of its two corners. The key is that prefix (left-aligned), then
    its length, then the position in ``slots``: each cell's own objects sort before its subtree
    and the subtrees in octant order. Rounding onto the grid and loose bounds make a few keys
    disagree with the exact placement; the partition corrects those, so keys only affect speed.
    """
    n = len(slots)
    keys = np.empty(n, dtype=np.int64)
    cells = np.int64(1) << levels
    scale = cells / cf[CF_SIDE]
    top = float(cells - 1)
    for i in range(n):
        s = slots[i]
        code_lo = np.int64(0)
        code_hi = np.int64(0)
        for a in range(3):
            q_lo = np.int64(min(max((lo[s, a] - cf[CF_ORIGIN + a]) * scale, 0.0), top))
            q_hi = np.int64(min(max((hi[s, a] - cf[CF_ORIGIN + a]) * scale, 0.0), top))
            code_lo |= _spread_bits(q_lo) << a
            code_hi |= _spread_bits(q_hi) << a
        differ = code_lo ^ code_hi
        depth = levels
        while differ != 0:
            differ >>= 3
            depth -= 1
        shift = 3 * (levels - depth)
        prefix = (code_lo >> shift) << shift
        keys[i] = (((prefix << PRESORT_DEPTH_BITS) | depth) << index_bits) | i
    return keys
