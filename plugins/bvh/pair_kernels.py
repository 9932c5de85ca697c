"""Compiled kernels on the BVH's depth-first tight copy: packing it, per-subtree flags and
pair finding (see :mod:`plugins.bvh.index`)."""
from __future__ import annotations

import numba
import numpy as np

import spatial.kernels as K


@numba.njit(cache=True, nogil=True)
def pack_tree(root, c1, c2, node_slot, obj_lo, obj_hi, n_nodes):
    """Depth-first copy of the tree with *tight* boxes, for queries and pair finding.

    Rows are in preorder, so a node's left child is the next row and a subtree is one run of
    memory. Leaf boxes are the objects' own boxes and inner boxes are refitted around them:
    the fat margins only decide when ``update`` reinserts a leaf, and pruning with the tight
    boxes tests far fewer subtree pairs. Returns ``(order, parent_rows, depths, left_rows,
    right_rows, row_slots, row_items, tight_lo, tight_hi, box, area, complete)``:
    ``left_rows`` is ``-1`` at a leaf, ``row_slots`` the leaf's object slot (``-1`` inside),
    ``row_items`` 1 at a leaf and 0 inside, ``box`` the tight boxes again as ``(m, 6)`` rows
    ``lo, hi`` (one cache line per node for the pair traversal), and ``complete`` false when
    more than ``n_nodes`` nodes were reachable (a corrupt tree; the copy then stops there).
    """
    order, parents, depths, complete = K.preorder_limited(root, c1, c2, n_nodes)
    m = len(order)
    left = np.full(m, -1, dtype=np.int64)
    right = np.full(m, -1, dtype=np.int64)
    for row in range(1, m):
        p = parents[row]
        if c1[order[p]] == order[row]:
            left[p] = row
        else:
            right[p] = row
    slots = np.full(m, -1, dtype=np.int64)
    items = np.zeros(m, dtype=np.int64)
    tight_lo = np.empty((m, 3))
    tight_hi = np.empty((m, 3))
    box = np.empty((m, 6))  # the same, one row per node, for the pair traversal
    area = np.empty(m)
    for r in range(m - 1, -1, -1):  # children come after their parents
        n = order[r]
        if left[r] < 0:
            s = node_slot[n]
            slots[r] = s
            items[r] = 1
            for k in range(3):
                tight_lo[r, k] = obj_lo[s, k]
                tight_hi[r, k] = obj_hi[s, k]
        else:
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
    return (order, parents, depths, left, right, slots, items, tight_lo, tight_hi, box, area,
            complete)


@numba.njit(cache=True, nogil=True)
def subtree_flags(parent_rows, left_rows, row_slots, active):
    """Per row: subtree leaf count and whether the subtree holds an active object."""
    m = len(parent_rows)
    count = np.zeros(m, dtype=np.int64)
    awake = np.zeros(m, dtype=np.bool_)
    for r in range(m - 1, -1, -1):
        if left_rows[r] < 0:
            count[r] += 1
            if active[row_slots[r]]:
                awake[r] = True
        p = parent_rows[r]
        if p >= 0:
            count[p] += count[r]
            if awake[r]:
                awake[p] = True
    return count, awake


@numba.njit(cache=True, inline="always")
def _rows_overlap(box, a, b):
    """Closed overlap of rows ``a`` and ``b`` of a ``(m, 6)`` lo-hi box array, read by index:
    array views would cost a reference-count update each in the hot loop."""
    return (box[a, 0] <= box[b, 3] and box[b, 0] <= box[a, 3] and box[a, 1] <= box[b, 4]
            and box[b, 1] <= box[a, 4] and box[a, 2] <= box[b, 5] and box[b, 2] <= box[a, 5])


@numba.njit(cache=True, nogil=True)
def self_pairs(box, left, right, row_slots, area, awake, only_active):
    """Every overlapping leaf pair, descending the packed tree against itself.

    Each unordered pair of subtrees meets once: every inner node pairs its two children, and
    a pair of overlapping subtrees splits the one with the larger box (a leaf never), as in
    Box2D and FCL. Only overlapping (and, in ``only_active`` mode, awake) subtree pairs are
    pushed, so the stack holds no dead entries. ``box`` holds each row's tight ``lo, hi``.
    Returns ``(slot pairs, leaf tests, per-row tests)``; a test is counted on the row where
    the two subtrees split apart (their lowest common ancestor).
    """
    n_rows = len(left)
    node_tests = np.zeros(n_rows, dtype=np.int64)
    out = np.empty((max(1024, n_rows), 2), dtype=np.int64)
    m = 0
    tests = 0
    st = np.empty((64, 2), dtype=np.int64)
    for origin in range(n_rows):
        x = left[origin]
        if x < 0 or (only_active and not awake[origin]):
            continue
        y = right[origin]
        if not _rows_overlap(box, x, y):
            continue
        st[0, 0] = x
        st[0, 1] = y
        sp = 1
        while sp > 0:
            sp, a, b = K.pop2(st, sp)
            leaf_a = left[a] < 0
            leaf_b = left[b] < 0
            if leaf_a and leaf_b:
                tests += 1
                node_tests[origin] += 1
                sa = row_slots[a]
                sb = row_slots[b]
                out, m = K.push_pair(out, m, min(sa, sb), max(sa, sb))
                continue
            if leaf_b or (not leaf_a and area[a] >= area[b]):
                c, d, other = left[a], right[a], b
            else:
                c, d, other = left[b], right[b], a
            if sp + 2 > st.shape[0]:
                st = K.grow(st, sp + 2)
            wake = not only_active or awake[other]
            if (wake or awake[c]) and _rows_overlap(box, c, other):
                st[sp, 0] = c
                st[sp, 1] = other
                sp += 1
            if (wake or awake[d]) and _rows_overlap(box, d, other):
                st[sp, 0] = d
                st[sp, 1] = other
                sp += 1
    return out[:m], tests, node_tests


@numba.njit(cache=True, nogil=True)
def active_leaf_pairs(box, left, right, row_slots, subtree_count, active_rows, active):
    """Pairs with an active object, one tree query per active leaf (Box2D's moved proxies).

    Each active leaf's box descends the packed tree; a pair of two active objects is reported
    by the query of the smaller slot only. While the descent follows the leaf's own path from
    the root, the node where it leaves that path is the lowest common ancestor every test below
    is counted on (in preorder a subtree is a run of ``2 * leaves - 1`` rows, so the path is
    a range test). Returns what :func:`self_pairs` returns.
    """
    n_rows = len(left)
    node_tests = np.zeros(n_rows, dtype=np.int64)
    out = np.empty((max(1024, 4 * len(active_rows)), 2), dtype=np.int64)
    m = 0
    tests = 0
    st = np.empty((64, 2), dtype=np.int64)  # row, lowest common ancestor (-1: on the path)
    for q in active_rows:
        s = row_slots[q]
        st[0, 0] = 0
        st[0, 1] = -1
        sp = 1
        while sp > 0:
            sp, n, origin = K.pop2(st, sp)
            if left[n] < 0:
                other = row_slots[n]
                if n == q or (active[other] and other < s):
                    continue
                tests += 1
                node_tests[origin] += 1
                out, m = K.push_pair(out, m, min(s, other), max(s, other))
                continue
            if sp + 2 > st.shape[0]:
                st = K.grow(st, sp + 2)
            for child in (left[n], right[n]):
                if not _rows_overlap(box, child, q):
                    continue
                below = origin
                if origin < 0 and not (child <= q < child + 2 * subtree_count[child] - 1):
                    below = n
                st[sp, 0] = child
                st[sp, 1] = below
                sp += 1
    return out[:m], tests, node_tests


