"""Compiled kernels of the quadtree backend (:mod:`plugins.quadtree`).

Storage is pooled so every kernel works on a handful of flat arrays:

* ``nf`` ``(cap, NF_COLS)`` float64 per node: the square on the two plane axes (``SQ_*``) and the
  *content box* (``C_LO``/``C_HI``, world axes), the union of the 3D boxes of every object stored
  under the node. Content boxes only grow between rebuilds (a removal does not shrink them), so
  they are conservative; a collapse recomputes them exactly.
* ``ni`` ``(cap, NI_COLS)`` int64 per node: first child (the four children of a node are
  consecutive rows), parent, depth, head of the bucket list, bucket size, references in the
  subtree, references to *active* objects in the subtree (a node is awake when this is > 0),
  the free-list link, a scratch stamp and, for a leaf, the number of references its objects
  would have among its four children (so whether a split pays off is known without a scan).
* ``ri`` ``(cap, 2)`` int64: bucket entries (slot, next) in singly linked lists.
* ``meta`` int64 scalars (pool tops, free lists, the stamp counter, live node count).
* per object slot: ``ob`` ``(cap, 4)`` the plane box the tree holds the object under
  (lo0, lo1, hi0, hi1), ``oact`` whether it is counted as active, ``mark`` a stamp used to
  de-duplicate objects met in several leaves.

Node 0 is always the root. Children of a node are allocated and freed four at a time.
Every loop uses an explicit stack: the deepest tree (``max_depth`` <= 24) needs at most
``3 * depth + 4`` entries, so a fixed ``STACK`` suffices.
"""
from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from spatial.kernels import (
    BOX,
    FRUSTUM,
    INF,
    RAY,
    batch_counters,
    close_query,
    frustum_may_keep_row,
    grow,
    push,
    push_pair,
    push_sorted,
    ray_setup,
    ray_slab_row,
    shape_meets_row,
    unpack_shape,
)

# node float columns
SQ_LO0, SQ_LO1, SQ_HI0, SQ_HI1 = 0, 1, 2, 3
C_LO, C_HI = 4, 7
NF_COLS = 10
# node int columns
CHILD, PARENT, DEPTH, HEAD, COUNT, REFS, ACTIVE, NEXT_FREE, MARK, SPLIT = range(10)
NI_COLS = 10
FREED = -2  # PARENT of a node row on the free list
# reference columns
R_SLOT, R_NEXT = 0, 1
# meta entries
M_NODE_TOP, M_FREE_GROUP, M_REF_TOP, M_FREE_REF, M_STAMP, M_LIVE = 0, 1, 2, 3, 4, 5
META_LEN = 8

STACK = 128


class QuadArrays(NamedTuple):
    """The pools and the object table the query and pair kernels read, passed as one argument
    (numba types a named tuple of arrays and integers as one heterogeneous tuple).

    ``nf``, ``ni``, ``ri``, ``meta`` are the pools of the module notes, ``mark`` and ``oact``
    the per-slot stamps and active flags, ``obj_lo/obj_hi/obj_ids`` the object table and
    ``a0, a1`` the two plane axes (``a2`` the one the tree ignores). The edit kernels take
    the pools one by one instead, because they grow them and hand the new arrays back.
    """

    nf: np.ndarray
    ni: np.ndarray
    ri: np.ndarray
    meta: np.ndarray
    mark: np.ndarray
    oact: np.ndarray
    obj_lo: np.ndarray
    obj_hi: np.ndarray
    obj_ids: np.ndarray
    a0: int
    a1: int
    a2: int
#: relative tolerance of the frustum cull on content boxes (objects get the exact test)
FRUSTUM_SLACK = 1e-9


# --------------------------------------------------------------------------- pools
@numba.njit(cache=True, inline="always")
def _init_node(nf, ni, n, lo0, lo1, hi0, hi1, parent, depth):
    nf[n, SQ_LO0] = lo0
    nf[n, SQ_LO1] = lo1
    nf[n, SQ_HI0] = hi0
    nf[n, SQ_HI1] = hi1
    for k in range(3):
        nf[n, C_LO + k] = np.inf
        nf[n, C_HI + k] = -np.inf
    ni[n, CHILD] = -1
    ni[n, PARENT] = parent
    ni[n, DEPTH] = depth
    ni[n, HEAD] = -1
    ni[n, COUNT] = 0
    ni[n, REFS] = 0
    ni[n, ACTIVE] = 0
    ni[n, NEXT_FREE] = -1
    ni[n, MARK] = 0
    ni[n, SPLIT] = 0


@numba.njit(cache=True, nogil=True)
def reset(nf, ni, meta, lo0, lo1, hi0, hi1):
    """Empty the pools and make node 0 an empty root leaf with the given square."""
    stamp = meta[M_STAMP]  # slot marks outlive the tree, so stamps must keep increasing
    for k in range(len(meta)):  # a loop, not slice assignment: see spatial.kernels.grow
        meta[k] = 0
    meta[M_STAMP] = stamp
    meta[M_NODE_TOP] = 1
    meta[M_FREE_GROUP] = -1
    meta[M_FREE_REF] = -1
    meta[M_LIVE] = 1
    _init_node(nf, ni, 0, lo0, lo1, hi0, hi1, -1, 0)


@numba.njit(cache=True, nogil=True)
def _alloc_group(nf, ni, meta):
    g = meta[M_FREE_GROUP]
    if g >= 0:
        meta[M_FREE_GROUP] = ni[g, NEXT_FREE]
    else:
        g = meta[M_NODE_TOP]
        meta[M_NODE_TOP] = g + 4
        nf = grow(nf, g + 4)
        ni = grow(ni, g + 4)
    meta[M_LIVE] += 4
    return g, nf, ni


@numba.njit(cache=True, nogil=True)
def _free_group(ni, meta, g):
    for k in range(4):
        ni[g + k, PARENT] = FREED
    ni[g, NEXT_FREE] = meta[M_FREE_GROUP]
    meta[M_FREE_GROUP] = g
    meta[M_LIVE] -= 4


@numba.njit(cache=True, inline="always")
def _quarters(nf, node, b0, b1, c0, c1):
    """How many of the four children of ``node`` the plane box ``[b0, c0] x [b1, c1]`` (which
    overlaps the node) would overlap."""
    m0 = 0.5 * (nf[node, SQ_LO0] + nf[node, SQ_HI0])
    m1 = 0.5 * (nf[node, SQ_LO1] + nf[node, SQ_HI1])
    nx = (1 if b0 <= m0 else 0) + (1 if c0 >= m0 else 0)
    ny = (1 if b1 <= m1 else 0) + (1 if c1 >= m1 else 0)
    return nx * ny


@numba.njit(cache=True, inline="always")
def _push_ref(nf, ni, ri, meta, ob, node, s):
    r = meta[M_FREE_REF]
    if r >= 0:
        meta[M_FREE_REF] = ri[r, R_NEXT]
    else:
        r = meta[M_REF_TOP]
        meta[M_REF_TOP] = r + 1
        ri = grow(ri, r + 1)
    ri[r, R_SLOT] = s
    ri[r, R_NEXT] = ni[node, HEAD]
    ni[node, HEAD] = r
    ni[node, COUNT] += 1
    ni[node, SPLIT] += _quarters(nf, node, ob[s, 0], ob[s, 1], ob[s, 2], ob[s, 3])
    return ri


@numba.njit(cache=True, inline="always")
def _free_ref(ri, meta, r):
    ri[r, R_SLOT] = -1
    ri[r, R_NEXT] = meta[M_FREE_REF]
    meta[M_FREE_REF] = r


@numba.njit(cache=True, inline="always")
def _unlink(nf, ni, ri, meta, ob, node, s):
    """Remove slot ``s`` from the bucket of ``node``; False if it was not there."""
    prev = -1
    r = ni[node, HEAD]
    while r >= 0:
        nxt = ri[r, R_NEXT]
        if ri[r, R_SLOT] == s:
            if prev < 0:
                ni[node, HEAD] = nxt
            else:
                ri[prev, R_NEXT] = nxt
            _free_ref(ri, meta, r)
            ni[node, COUNT] -= 1
            ni[node, SPLIT] -= _quarters(nf, node, ob[s, 0], ob[s, 1], ob[s, 2], ob[s, 3])
            return True
        prev = r
        r = nxt
    return False


@numba.njit(cache=True, inline="always")
def _expand(nf, n, lo, hi, s):
    for k in range(3):
        if lo[s, k] < nf[n, C_LO + k]:
            nf[n, C_LO + k] = lo[s, k]
        if hi[s, k] > nf[n, C_HI + k]:
            nf[n, C_HI + k] = hi[s, k]


@numba.njit(cache=True, inline="always")
def _walk_up(nf, ni, n, dref, dact, lo, hi, s):
    """Add ``dref``/``dact`` to the subtree counters of ``n`` and its ancestors; grow their
    content boxes by object ``s`` unless ``s`` < 0."""
    while n >= 0:
        ni[n, REFS] += dref
        ni[n, ACTIVE] += dact
        if s >= 0:
            _expand(nf, n, lo, hi, s)
        n = ni[n, PARENT]


@numba.njit(cache=True, inline="always")
def _enclose_up(nf, ni, n, src):
    """Grow the content boxes of ``n``'s ancestors to enclose that of node ``src``. Needed
    after a split or collapse: objects of a batch edit may already hold their new bounds
    while still filed under their old leaves."""
    p = ni[n, PARENT]
    while p >= 0:
        grew = False
        for k in range(3):
            if nf[src, C_LO + k] < nf[p, C_LO + k]:
                nf[p, C_LO + k] = nf[src, C_LO + k]
                grew = True
            if nf[src, C_HI + k] > nf[p, C_HI + k]:
                nf[p, C_HI + k] = nf[src, C_HI + k]
                grew = True
        if not grew:
            break
        p = ni[p, PARENT]


@numba.njit(cache=True, inline="always")
def _alive_leaf(ni, n):
    return ni[n, PARENT] != FREED and ni[n, CHILD] < 0


# --------------------------------------------------------------------------- structure
@numba.njit(cache=True, nogil=True)
def leaves_of(nf, ni, b0, b1, c0, c1, out, stack):
    """Leaves whose closed square overlaps the plane box ``[b0, c0] x [b1, c1]``
    (``stack``: scratch of ``STACK`` entries, passed in so per-object calls allocate nothing)."""
    stack[0] = 0
    top = 1
    n = 0
    while top:
        top -= 1
        node = stack[top]
        if (b0 > nf[node, SQ_HI0] or c0 < nf[node, SQ_LO0]
                or b1 > nf[node, SQ_HI1] or c1 < nf[node, SQ_LO1]):
            continue
        first = ni[node, CHILD]
        if first < 0:
            out = grow(out, n + 1)
            out[n] = node
            n += 1
        else:
            for k in range(4):
                stack[top] = first + k
                top += 1
    return out, n


@numba.njit(cache=True, inline="always")
def split_worthy(nf, ni, node, cap, max_depth, max_dup):
    """Should this leaf split? Only when over capacity, above ``max_depth``, and when the split
    separates its objects: not every object lands in all four children, and on average each
    lands in at most ``max_dup`` of them (else splitting multiplies references for nothing)."""
    cnt = ni[node, COUNT]
    if ni[node, CHILD] >= 0 or cnt <= cap or ni[node, DEPTH] >= max_depth:
        return False
    total = ni[node, SPLIT]
    return total < 4 * cnt and total <= max_dup * cnt


@numba.njit(cache=True, nogil=True)
def _split(nf, ni, ri, meta, ob, oact, lo, hi, node):
    """Turn leaf ``node`` into four children and re-insert its objects (closed overlap)."""
    lo0, lo1 = nf[node, SQ_LO0], nf[node, SQ_LO1]
    hi0, hi1 = nf[node, SQ_HI0], nf[node, SQ_HI1]
    m0 = 0.5 * (lo0 + hi0)
    m1 = 0.5 * (lo1 + hi1)
    g, nf, ni = _alloc_group(nf, ni, meta)
    d = ni[node, DEPTH] + 1
    _init_node(nf, ni, g, lo0, lo1, m0, m1, node, d)
    _init_node(nf, ni, g + 1, m0, lo1, hi0, m1, node, d)
    _init_node(nf, ni, g + 2, lo0, m1, m0, hi1, node, d)
    _init_node(nf, ni, g + 3, m0, m1, hi0, hi1, node, d)
    old_refs = ni[node, COUNT]
    old_act = 0
    new_refs = 0
    new_act = 0
    r = ni[node, HEAD]
    while r >= 0:
        s = ri[r, R_SLOT]
        nxt = ri[r, R_NEXT]
        a = 1 if oact[s] else 0
        old_act += a
        left0 = ob[s, 0] <= m0
        right0 = ob[s, 2] >= m0
        low1 = ob[s, 1] <= m1
        high1 = ob[s, 3] >= m1
        for k in range(4):
            in0 = right0 if (k & 1) else left0
            in1 = high1 if (k & 2) else low1
            if in0 and in1:
                c = g + k
                ri = _push_ref(nf, ni, ri, meta, ob, c, s)
                ni[c, REFS] += 1
                ni[c, ACTIVE] += a
                _expand(nf, c, lo, hi, s)
                new_refs += 1
                new_act += a
        _free_ref(ri, meta, r)
        r = nxt
    ni[node, CHILD] = g
    ni[node, HEAD] = -1
    ni[node, COUNT] = 0
    ni[node, SPLIT] = 0
    _walk_up(nf, ni, node, new_refs - old_refs, new_act - old_act, lo, hi, -1)
    for k in range(4):
        _enclose_up(nf, ni, g + k, g + k)
    return nf, ni, ri


@numba.njit(cache=True, nogil=True)
def _settle(nf, ni, ri, meta, ob, oact, lo, hi, start, cap, max_depth, max_dup):
    """Split ``start`` and then its children for as long as they are worth splitting."""
    if not split_worthy(nf, ni, start, cap, max_depth, max_dup):
        return nf, ni, ri  # the common case: nothing to do, so allocate nothing
    stack = np.empty(STACK, dtype=np.int64)
    stack[0] = start
    top = 1
    while top:
        top -= 1
        node = stack[top]
        if split_worthy(nf, ni, node, cap, max_depth, max_dup):
            nf, ni, ri = _split(nf, ni, ri, meta, ob, oact, lo, hi, node)
            first = ni[node, CHILD]
            for k in range(4):
                stack[top] = first + k
                top += 1
    return nf, ni, ri


@numba.njit(cache=True, nogil=True)
def _fits(ni, ri, meta, mark, node, cap):
    """Do the distinct objects under ``node`` fit one bucket? Stops at the first excess."""
    if ni[node, REFS] <= cap:
        return True
    meta[M_STAMP] += 1
    stamp = meta[M_STAMP]
    stack = np.empty(STACK, dtype=np.int64)
    stack[0] = node
    top = 1
    distinct = 0
    while top:
        top -= 1
        n = stack[top]
        first = ni[n, CHILD]
        if first >= 0:
            for k in range(4):
                if ni[first + k, REFS] > 0:
                    stack[top] = first + k
                    top += 1
            continue
        r = ni[n, HEAD]
        while r >= 0:
            s = ri[r, R_SLOT]
            if mark[s] != stamp:
                mark[s] = stamp
                distinct += 1
                if distinct > cap:
                    return False
            r = ri[r, R_NEXT]
    return True


@numba.njit(cache=True, nogil=True)
def _collapse(nf, ni, ri, meta, mark, ob, oact, lo, hi, node, cap):
    """Free every descendant of ``node`` and make it a leaf holding their distinct objects."""
    meta[M_STAMP] += 1
    stamp = meta[M_STAMP]
    keep = np.empty(cap, dtype=np.int64)
    k = 0
    groups = np.empty(STACK, dtype=np.int64)
    groups[0] = ni[node, CHILD]
    top = 1
    while top:
        top -= 1
        g = groups[top]
        for j in range(4):
            c = g + j
            if ni[c, CHILD] >= 0:
                groups[top] = ni[c, CHILD]
                top += 1
                continue
            r = ni[c, HEAD]
            while r >= 0:
                s = ri[r, R_SLOT]
                nxt = ri[r, R_NEXT]
                if mark[s] != stamp:
                    mark[s] = stamp
                    keep[k] = s
                    k += 1
                _free_ref(ri, meta, r)
                r = nxt
            ni[c, HEAD] = -1
            ni[c, COUNT] = 0
        _free_group(ni, meta, g)
    ni[node, CHILD] = -1
    ni[node, HEAD] = -1
    ni[node, COUNT] = 0
    ni[node, SPLIT] = 0
    for j in range(3):
        nf[node, C_LO + j] = np.inf
        nf[node, C_HI + j] = -np.inf
    act = 0
    for j in range(k):
        s = keep[j]
        ri = _push_ref(nf, ni, ri, meta, ob, node, s)
        _expand(nf, node, lo, hi, s)
        if oact[s]:
            act += 1
    _walk_up(nf, ni, node, k - ni[node, REFS], act - ni[node, ACTIVE], lo, hi, -1)
    _enclose_up(nf, ni, node, node)
    return ri


@numba.njit(cache=True, nogil=True)
def _collapse_from(nf, ni, ri, meta, mark, ob, oact, lo, hi, leaf, cap):
    """After ``leaf`` lost objects: collapse its highest ancestor whose objects fit a bucket."""
    p = ni[leaf, PARENT]
    best = -1
    while p >= 0 and _fits(ni, ri, meta, mark, p, cap):
        best = p
        p = ni[p, PARENT]
    if best >= 0:
        ri = _collapse(nf, ni, ri, meta, mark, ob, oact, lo, hi, best, cap)
    return ri


# --------------------------------------------------------------------------- edits
@numba.njit(cache=True, nogil=True)
def build(nf, ni, ri, meta, ob, oact, lo, hi, slots, cap, max_depth, max_dup):
    """Build the whole tree top-down under the (freshly reset) root.

    Splits follow the same rule as incremental inserts, but objects are partitioned in flat
    buffers (slots with their plane boxes, depth first, the space of finished subtrees reused)
    and each leaf's bucket is allocated in one run of the reference pool, so later pair and
    query passes read it sequentially.
    """
    n = len(slots)
    size = max(2 * n, 64)
    buf = np.empty(size, dtype=np.int64)
    box = np.empty((size, 4))
    for i in range(n):
        buf[i] = slots[i]
        for j in range(4):
            box[i, j] = ob[slots[i], j]
    seg_node = np.empty(STACK, dtype=np.int64)
    seg_start = np.empty(STACK, dtype=np.int64)
    seg_end = np.empty(STACK, dtype=np.int64)
    seg_node[0], seg_start[0], seg_end[0] = 0, 0, n
    top = 1
    while top:
        top -= 1
        node, s0, s1 = seg_node[top], seg_start[top], seg_end[top]
        cnt = s1 - s0
        m0 = 0.5 * (nf[node, SQ_LO0] + nf[node, SQ_HI0])
        m1 = 0.5 * (nf[node, SQ_LO1] + nf[node, SQ_HI1])
        total = 0
        for i in range(s0, s1):
            nx = (1 if box[i, 0] <= m0 else 0) + (1 if box[i, 2] >= m0 else 0)
            ny = (1 if box[i, 1] <= m1 else 0) + (1 if box[i, 3] >= m1 else 0)
            total += nx * ny
        if (cnt > cap and ni[node, DEPTH] < max_depth and total < 4 * cnt
                and total <= max_dup * cnt):
            g, nf, ni = _alloc_group(nf, ni, meta)
            lo0, lo1 = nf[node, SQ_LO0], nf[node, SQ_LO1]
            hi0, hi1 = nf[node, SQ_HI0], nf[node, SQ_HI1]
            d = ni[node, DEPTH] + 1
            _init_node(nf, ni, g, lo0, lo1, m0, m1, node, d)
            _init_node(nf, ni, g + 1, m0, lo1, hi0, m1, node, d)
            _init_node(nf, ni, g + 2, lo0, m1, m0, hi1, node, d)
            _init_node(nf, ni, g + 3, m0, m1, hi0, hi1, node, d)
            ni[node, CHILD] = g
            if s1 + total > buf.shape[0]:  # children segments go above this one
                buf = grow(buf, s1 + total)
                box = grow(box, s1 + total)
            w = s1
            for k in range(4):
                c_start = w
                for i in range(s0, s1):
                    in0 = (box[i, 2] >= m0) if (k & 1) else (box[i, 0] <= m0)
                    in1 = (box[i, 3] >= m1) if (k & 2) else (box[i, 1] <= m1)
                    if in0 and in1:
                        buf[w] = buf[i]
                        for j in range(4):
                            box[w, j] = box[i, j]
                        w += 1
                seg_node[top], seg_start[top], seg_end[top] = g + k, c_start, w
                top += 1
            continue
        act = 0
        for i in range(s1 - 1, s0 - 1, -1):  # pushed backwards: the list reads forwards
            sl = buf[i]
            ri = _push_ref(nf, ni, ri, meta, ob, node, sl)
            _expand(nf, node, lo, hi, sl)
            if oact[sl]:
                act += 1
        ni[node, REFS] = cnt
        ni[node, ACTIVE] = act
    # inner nodes: children were allocated after their parents, so walk the pool backwards
    for node in range(meta[M_NODE_TOP] - 1, -1, -1):
        first = ni[node, CHILD]
        if first < 0:
            continue
        refs = 0
        act = 0
        for k in range(4):
            c = first + k
            refs += ni[c, REFS]
            act += ni[c, ACTIVE]
            for j in range(3):
                if nf[c, C_LO + j] < nf[node, C_LO + j]:
                    nf[node, C_LO + j] = nf[c, C_LO + j]
                if nf[c, C_HI + j] > nf[node, C_HI + j]:
                    nf[node, C_HI + j] = nf[c, C_HI + j]
        ni[node, REFS] = refs
        ni[node, ACTIVE] = act
    return nf, ni, ri


@numba.njit(cache=True, nogil=True)
def insert(nf, ni, ri, meta, ob, oact, lo, hi, slots, cap, max_depth, max_dup):
    """Add each slot to every leaf its plane box overlaps; split leaves that overflow."""
    leaves = np.empty(64, dtype=np.int64)
    stack = np.empty(STACK, dtype=np.int64)
    for s in slots:
        leaves, n = leaves_of(nf, ni, ob[s, 0], ob[s, 1], ob[s, 2], ob[s, 3], leaves, stack)
        a = 1 if oact[s] else 0
        for i in range(n):
            ri = _push_ref(nf, ni, ri, meta, ob, leaves[i], s)
            _walk_up(nf, ni, leaves[i], 1, a, lo, hi, s)
        for i in range(n):
            if _alive_leaf(ni, leaves[i]) and ni[leaves[i], COUNT] > cap:
                nf, ni, ri = _settle(nf, ni, ri, meta, ob, oact, lo, hi, leaves[i], cap,
                                     max_depth, max_dup)
    return nf, ni, ri


@numba.njit(cache=True, nogil=True)
def _after_loss(nf, ni, ri, meta, mark, ob, oact, lo, hi, leaves, n, cap, max_depth, max_dup):
    """Fix-ups for leaves that lost objects: collapse, or split if now worth it."""
    for i in range(n):
        if _alive_leaf(ni, leaves[i]):
            ri = _collapse_from(nf, ni, ri, meta, mark, ob, oact, lo, hi, leaves[i], cap)
    for i in range(n):
        if _alive_leaf(ni, leaves[i]) and ni[leaves[i], COUNT] > cap:
            nf, ni, ri = _settle(nf, ni, ri, meta, ob, oact, lo, hi, leaves[i], cap,
                                 max_depth, max_dup)
    return nf, ni, ri


@numba.njit(cache=True, nogil=True)
def remove(nf, ni, ri, meta, mark, ob, oact, lo, hi, slots, cap, max_depth, max_dup):
    """Drop each slot from the leaves its stored plane box overlaps; collapse what fits."""
    leaves = np.empty(64, dtype=np.int64)
    stack = np.empty(STACK, dtype=np.int64)
    for s in slots:
        leaves, n = leaves_of(nf, ni, ob[s, 0], ob[s, 1], ob[s, 2], ob[s, 3], leaves, stack)
        a = 1 if oact[s] else 0
        for i in range(n):
            if _unlink(nf, ni, ri, meta, ob, leaves[i], s):
                _walk_up(nf, ni, leaves[i], -1, -a, lo, hi, -1)
        oact[s] = False
        nf, ni, ri = _after_loss(nf, ni, ri, meta, mark, ob, oact, lo, hi, leaves, n, cap,
                                 max_depth, max_dup)
    return nf, ni, ri


@numba.njit(cache=True, nogil=True)
def update(nf, ni, ri, meta, mark, ob, oact, lo, hi, slots, a0, a1, cap, max_depth, max_dup):
    """Move each slot: leave the leaves it left, join the ones it entered, and only refresh
    content boxes when it stays in the same leaves (the common, cheap case)."""
    before = np.empty(64, dtype=np.int64)
    stack = np.empty(STACK, dtype=np.int64)
    after = np.empty(64, dtype=np.int64)
    for s in slots:
        b0, b1, c0, c1 = lo[s, a0], lo[s, a1], hi[s, a0], hi[s, a1]
        before, nb = leaves_of(nf, ni, ob[s, 0], ob[s, 1], ob[s, 2], ob[s, 3], before, stack)
        after, na = leaves_of(nf, ni, b0, b1, c0, c1, after, stack)
        a = 1 if oact[s] else 0
        meta[M_STAMP] += 1
        in_after = meta[M_STAMP]
        for i in range(na):
            ni[after[i], MARK] = in_after
        changed = False
        for i in range(nb):
            if ni[before[i], MARK] != in_after:
                _unlink(nf, ni, ri, meta, ob, before[i], s)
                _walk_up(nf, ni, before[i], -1, -a, lo, hi, -1)
                changed = True
        old0, old1, old2, old3 = ob[s, 0], ob[s, 1], ob[s, 2], ob[s, 3]
        ob[s, 0], ob[s, 1], ob[s, 2], ob[s, 3] = b0, b1, c0, c1
        meta[M_STAMP] += 1
        in_before = meta[M_STAMP]
        for i in range(nb):
            ni[before[i], MARK] = in_before
        for i in range(na):
            leaf = after[i]
            if ni[leaf, MARK] != in_before:
                ri = _push_ref(nf, ni, ri, meta, ob, leaf, s)
                _walk_up(nf, ni, leaf, 1, a, lo, hi, s)
                changed = True
            else:
                ni[leaf, SPLIT] += (_quarters(nf, leaf, b0, b1, c0, c1)
                                    - _quarters(nf, leaf, old0, old1, old2, old3))
                _walk_up(nf, ni, leaf, 0, 0, lo, hi, s)
        if changed:
            nf, ni, ri = _after_loss(nf, ni, ri, meta, mark, ob, oact, lo, hi, before, nb, cap,
                                     max_depth, max_dup)
        # a move inside the same leaves can still change whether a full leaf is worth splitting
        for i in range(na):
            if _alive_leaf(ni, after[i]) and ni[after[i], COUNT] > cap:
                nf, ni, ri = _settle(nf, ni, ri, meta, ob, oact, lo, hi, after[i], cap,
                                     max_depth, max_dup)
    return nf, ni, ri


@numba.njit(cache=True, nogil=True)
def set_active(nf, ni, ob, oact, lo, hi, slots, flags):
    """Record the new active state of each slot and propagate the change to ancestors."""
    leaves = np.empty(64, dtype=np.int64)
    stack = np.empty(STACK, dtype=np.int64)
    for i in range(len(slots)):
        s = slots[i]
        if oact[s] == flags[i]:
            continue
        delta = 1 if flags[i] else -1
        leaves, n = leaves_of(nf, ni, ob[s, 0], ob[s, 1], ob[s, 2], ob[s, 3], leaves, stack)
        for j in range(n):
            _walk_up(nf, ni, leaves[j], 0, delta, lo, hi, -1)
        oact[s] = flags[i]


# --------------------------------------------------------------------------- queries
@numba.njit(cache=True, inline="always")
def _node_box(nf, n, a0, a1, a2, box_lo, box_hi):
    """The box a query culls node ``n`` with (written to row 0 of ``box_lo``/``box_hi``): its
    square (any height) clipped to its content box. Every stored object meets the square of
    one of its leaves inside that box, which is all box, sphere and ray culling needs."""
    box_lo[0, a0] = max(nf[n, SQ_LO0], nf[n, C_LO + a0])
    box_hi[0, a0] = min(nf[n, SQ_HI0], nf[n, C_HI + a0])
    box_lo[0, a1] = max(nf[n, SQ_LO1], nf[n, C_LO + a1])
    box_hi[0, a1] = min(nf[n, SQ_HI1], nf[n, C_HI + a1])
    box_lo[0, a2] = nf[n, C_LO + a2]
    box_hi[0, a2] = nf[n, C_HI + a2]


@numba.njit(cache=True, inline="always")
def _traverse(nf, ni, ri, meta, mark, lo, hi, a0, a1, a2, kind, qa, qb, scalar, inv, planes,
              blo, bhi, stack, out, ts, found, rows, n_rows, culled, n_culled, trace):
    """One query in the shared shape encoding (parts from :func:`spatial.kernels.unpack_shape`),
    its slots appended to ``out`` (ray ``t`` to ``ts``) from ``found``. A frustum culls on the
    nodes' content boxes with a tolerance and returns every object reached as a *candidate*
    for the exact test done by the caller. Inlined, so the batched box query, which passes
    the constant kind, gets a copy with the other kinds' branches folded away (a shared
    compiled copy would save about 3 s of first-start compile but made 10,000 box queries
    1.4 times slower)."""
    meta[M_STAMP] += 1
    stamp = meta[M_STAMP]
    visited = 0
    tested = 0
    stack[0] = 0
    top = 1
    while top:
        top -= 1
        n = stack[top]
        if ni[n, REFS] == 0:
            continue
        visited += 1
        if trace:
            rows, n_rows = push(rows, n_rows, n)
        if kind == FRUSTUM:
            for k in range(3):
                blo[0, k] = nf[n, C_LO + k]
                bhi[0, k] = nf[n, C_HI + k]
            keep = frustum_may_keep_row(planes, blo, bhi, 0, FRUSTUM_SLACK)
        else:
            _node_box(nf, n, a0, a1, a2, blo, bhi)
            keep = shape_meets_row(kind, qa, qb, scalar, inv, planes, blo, bhi, 0) < INF
        if not keep:
            if trace:
                culled, n_culled = push(culled, n_culled, n)
            continue
        first = ni[n, CHILD]
        if first >= 0:
            for k in range(4):
                stack[top] = first + k
                top += 1
            continue
        r = ni[n, HEAD]
        while r >= 0:
            s = ri[r, R_SLOT]
            r = ri[r, R_NEXT]
            if mark[s] == stamp:
                continue
            mark[s] = stamp
            tested += 1
            t = 0.0
            if kind != FRUSTUM:
                t = shape_meets_row(kind, qa, qb, scalar, inv, planes, lo, hi, s)
                if t == INF:
                    continue
            out, found = push(out, found, s)
            if kind == RAY:
                ts, _ = push(ts, found - 1, t)
    return out, ts, found, visited, tested, rows, n_rows, culled, n_culled


@numba.njit(cache=True, nogil=True)
def query(tree, kind, params, planes, trace):
    """One query of any kind in the shared shape encoding (:mod:`spatial.kernels`); a frustum
    returns *candidates* for the exact test done by the caller.

    Returns ``(slots, ts, nodes_visited, objects_tested, rows, culled)``; ``ts`` only for rays;
    rows are internal node indices (visited: every node whose box was tested; culled: those
    rejected).
    """
    nf, ni, ri, meta, mark = tree.nf, tree.ni, tree.ri, tree.meta, tree.mark
    lo, hi, a0, a1, a2 = tree.obj_lo, tree.obj_hi, tree.a0, tree.a1, tree.a2
    qa, qb, scalar, inv = unpack_shape(kind, params)
    out = np.empty(64, dtype=np.int64)
    ts = np.empty(64 if kind == RAY else 0)
    rows = np.empty(64 if trace else 1, dtype=np.int64)
    culled = np.empty(64 if trace else 1, dtype=np.int64)
    stack = np.empty(STACK, dtype=np.int64)
    out, ts, found, visited, tested, rows, n_rows, culled, n_culled = _traverse(
        nf, ni, ri, meta, mark, lo, hi, a0, a1, a2, kind, qa, qb, scalar, inv, planes,
        np.empty((1, 3)), np.empty((1, 3)), stack, out, ts, 0, rows, 0, culled, 0, trace)
    return (out[:found], ts[:found if kind == RAY else 0], visited, tested, rows[:n_rows],
            culled[:n_culled])


@numba.njit(cache=True, nogil=True)
def query_boxes(tree, qlo, qhi):
    """Many box queries in one pass: CSR ``(slots, offsets, visited, tested)``."""
    nf, ni, ri, meta, mark = tree.nf, tree.ni, tree.ri, tree.meta, tree.mark
    lo, hi, a0, a1, a2 = tree.obj_lo, tree.obj_hi, tree.a0, tree.a1, tree.a2
    nq = qlo.shape[0]
    offsets, visited, tested = batch_counters(nq)
    out = np.empty(256, dtype=np.int64)
    ts = np.empty(0)
    rows = np.empty(1, dtype=np.int64)
    found = 0
    blo = np.empty((1, 3))
    bhi = np.empty((1, 3))
    inv = np.zeros(3)
    planes = np.zeros((0, 4))
    stack = np.empty(STACK, dtype=np.int64)
    for q in range(nq):
        out, ts, found, v, t, rows, _, rows, _ = _traverse(
            nf, ni, ri, meta, mark, lo, hi, a0, a1, a2, BOX, qlo[q], qhi[q], 0.0, inv, planes,
            blo, bhi, stack, out, ts, found, rows, 0, rows, 0, False)
        close_query(q, found, v, t, offsets, visited, tested)
    return out[:found], offsets, visited, tested


@numba.njit(cache=True, nogil=True)
def query_rays(tree, origins, directions, max_t):
    """Closest hit of each ray: children are visited nearest first and a node is skipped as
    soon as its entry distance exceeds the best hit so far. Ties go to the smaller id."""
    nf, ni, ri, meta, mark = tree.nf, tree.ni, tree.ri, tree.meta, tree.mark
    lo, hi, ids, a0, a1, a2 = tree.obj_lo, tree.obj_hi, tree.obj_ids, tree.a0, tree.a1, tree.a2
    nq = origins.shape[0]
    best_slot = np.full(nq, -1, dtype=np.int64)
    best_t = np.full(nq, np.inf)
    visited = np.zeros(nq, dtype=np.int64)
    tested = np.zeros(nq, dtype=np.int64)
    blo = np.empty((1, 3))
    bhi = np.empty((1, 3))
    stack = np.empty(STACK, dtype=np.int64)
    stack_t = np.empty(STACK)
    child_t = np.empty(4)
    child_n = np.empty(4, dtype=np.int64)
    for q in range(nq):
        origin = origins[q]
        direction = directions[q]
        inv = ray_setup(direction)
        meta[M_STAMP] += 1
        stamp = meta[M_STAMP]
        bt = np.inf
        bs = -1
        top = 0
        if ni[0, REFS] > 0:
            visited[q] += 1
            _node_box(nf, 0, a0, a1, a2, blo, bhi)
            t = ray_slab_row(origin, direction, inv, blo, bhi, 0)
            if t < INF and t <= max_t:
                stack[0] = 0
                stack_t[0] = t
                top = 1
        while top:
            top -= 1
            n = stack[top]
            if stack_t[top] > bt:
                continue
            first = ni[n, CHILD]
            if first >= 0:
                m = 0
                for k in range(4):
                    c = first + k
                    if ni[c, REFS] == 0:
                        continue
                    visited[q] += 1
                    _node_box(nf, c, a0, a1, a2, blo, bhi)
                    t = ray_slab_row(origin, direction, inv, blo, bhi, 0)
                    if t < INF and t <= max_t and t <= bt:
                        m = push_sorted(child_n, child_t, m, c, t)
                for j in range(m):
                    stack[top] = child_n[j]
                    stack_t[top] = child_t[j]
                    top += 1
                continue
            r = ni[n, HEAD]
            while r >= 0:
                s = ri[r, R_SLOT]
                r = ri[r, R_NEXT]
                if mark[s] == stamp:
                    continue
                mark[s] = stamp
                tested[q] += 1
                t = ray_slab_row(origin, direction, inv, lo, hi, s)
                if t < INF and t <= max_t and (bs < 0 or t < bt or (t == bt and ids[s] < ids[bs])):
                    bt = t
                    bs = s
        best_slot[q] = bs
        best_t[q] = bt
    return best_slot, best_t, visited, tested


# --------------------------------------------------------------------------- pairs
@numba.njit(cache=True, nogil=True)
def pairs(tree, only_active, node_tests):
    """Overlapping pairs, each reported once although found in every leaf both objects share.

    Within a leaf the objects are sorted along the axis the tree ignores and swept: a pair is
    tested only when the two overlap on that axis, so a leaf's cost tracks its real overlaps.

    A pair is reported only by the leaf whose half-open square owns the low corner of the two
    boxes' plane intersection (the root's high edges are closed), a point both boxes contain.
    ``node_tests`` (per internal node, zeroed by the caller) counts every test, duplicates too.
    """
    nf, ni, ri, lo, hi, oact = tree.nf, tree.ni, tree.ri, tree.obj_lo, tree.obj_hi, tree.oact
    a0, a1, a2 = tree.a0, tree.a1, tree.a2
    root_hi0 = nf[0, SQ_HI0]
    root_hi1 = nf[0, SQ_HI1]
    out = np.empty((1024, 2), dtype=np.int64)
    m = 0
    tests = 0
    bucket = np.empty(64, dtype=np.int64)
    keys = np.empty(64)
    # the bucket's bounds copied per axis in sweep order (u, v: plane axes; w: swept axis),
    # so the inner loop reads contiguous memory with fixed strides
    u_lo, u_hi = np.empty(64), np.empty(64)
    v_lo, v_hi = np.empty(64), np.empty(64)
    w_lo, w_hi = np.empty(64), np.empty(64)
    bact = np.empty(64, dtype=np.bool_)
    stack = np.empty(STACK, dtype=np.int64)
    stack[0] = 0
    top = 1
    while top:
        top -= 1
        n = stack[top]
        if ni[n, REFS] == 0 or (only_active and ni[n, ACTIVE] == 0):
            continue
        first = ni[n, CHILD]
        if first >= 0:
            for k in range(4):
                stack[top] = first + k
                top += 1
            continue
        cnt = ni[n, COUNT]
        if cnt > bucket.shape[0]:
            size = max(cnt, 2 * bucket.shape[0])
            bucket = np.empty(size, dtype=np.int64)
            keys = np.empty(size)
            u_lo, u_hi = np.empty(size), np.empty(size)
            v_lo, v_hi = np.empty(size), np.empty(size)
            w_lo, w_hi = np.empty(size), np.empty(size)
            bact = np.empty(size, dtype=np.bool_)
        r = ni[n, HEAD]
        k = 0
        while r >= 0:
            bucket[k] = ri[r, R_SLOT]
            keys[k] = lo[bucket[k], a2]
            k += 1
            r = ri[r, R_NEXT]
        if cnt <= 32:  # small buckets: sort in place, no allocation
            for i in range(1, cnt):
                key, b = keys[i], bucket[i]
                j = i
                while j > 0 and keys[j - 1] > key:
                    keys[j] = keys[j - 1]
                    bucket[j] = bucket[j - 1]
                    j -= 1
                keys[j] = key
                bucket[j] = b
        else:
            by_key = bucket[np.argsort(keys[:cnt])]
            for i in range(cnt):  # element copy: slice assignment compiles far slower
                bucket[i] = by_key[i]
        order = bucket
        for i in range(cnt):
            b = bucket[i]
            u_lo[i], u_hi[i] = lo[b, a0], hi[b, a0]
            v_lo[i], v_hi[i] = lo[b, a1], hi[b, a1]
            w_lo[i], w_hi[i] = lo[b, a2], hi[b, a2]
            bact[i] = oact[b]
        lo0, lo1 = nf[n, SQ_LO0], nf[n, SQ_LO1]
        hi0, hi1 = nf[n, SQ_HI0], nf[n, SQ_HI1]
        closed0 = hi0 == root_hi0
        closed1 = hi1 == root_hi1
        local = 0
        for i in range(cnt):
            act_a = bact[i]
            end = w_hi[i]
            ul, uh, vl, vh = u_lo[i], u_hi[i], v_lo[i], v_hi[i]
            for j in range(i + 1, cnt):
                if w_lo[j] > end:
                    break
                if only_active and not (act_a or bact[j]):
                    continue
                local += 1
                if ul <= u_hi[j] and u_lo[j] <= uh and vl <= v_hi[j] and v_lo[j] <= vh:
                    p0 = max(ul, u_lo[j])
                    p1 = max(vl, v_lo[j])
                    if (lo0 <= p0 and (p0 < hi0 or closed0) and lo1 <= p1 and (p1 < hi1 or closed1)):
                        out, m = push_pair(out, m, order[i], order[j])
        node_tests[n] = local
        tests += local
    return out[:m], tests


# --------------------------------------------------------------------------- inspection
@numba.njit(cache=True, nogil=True)
def bfs_order(ni, meta):
    """Live nodes breadth first (parents before children) and each node's row in that order."""
    order = np.empty(meta[M_LIVE], dtype=np.int64)
    row_of = np.full(meta[M_NODE_TOP], -1, dtype=np.int64)
    order[0] = 0
    head = 0
    tail = 1
    while head < tail:
        n = order[head]
        row_of[n] = head
        head += 1
        first = ni[n, CHILD]
        if first >= 0:
            if tail + 4 > order.shape[0]:
                return order[:0], row_of  # more nodes reachable than live: corrupt
            for k in range(4):
                order[tail] = first + k
                tail += 1
    return order[:tail], row_of


@numba.njit(cache=True, nogil=True)
def bucket_slots(ni, ri, node):
    out = np.empty(ni[node, COUNT], dtype=np.int64)
    r = ni[node, HEAD]
    k = 0
    while r >= 0 and k < out.shape[0]:
        out[k] = ri[r, R_SLOT]
        k += 1
        r = ri[r, R_NEXT]
    return out[:k]


@numba.njit(cache=True, nogil=True)
def validate(nf, ni, ri, meta, mark, ob, oact, lo, hi, alive, dynamic, awake, a0, a1,
             cap, max_depth, max_dup):
    """Check every invariant; return ``(code, a, b, c)`` with code 0 when all hold."""
    order, row_of = bfs_order(ni, meta)
    if order.shape[0] != meta[M_LIVE]:
        return 1, order.shape[0], meta[M_LIVE], 0
    n_slots = alive.shape[0]
    refs_of = np.zeros(n_slots, dtype=np.int64)
    sub_refs = np.zeros(meta[M_NODE_TOP], dtype=np.int64)
    sub_act = np.zeros(meta[M_NODE_TOP], dtype=np.int64)
    meta[M_STAMP] += 1
    for idx in range(order.shape[0] - 1, -1, -1):
        n = order[idx]
        if ni[n, DEPTH] > max_depth:
            return 5, n, ni[n, DEPTH], 0
        first = ni[n, CHILD]
        if first >= 0:
            if ni[n, HEAD] != -1 or ni[n, COUNT] != 0:
                return 19, n, 0, 0
            m0 = 0.5 * (nf[n, SQ_LO0] + nf[n, SQ_HI0])
            m1 = 0.5 * (nf[n, SQ_LO1] + nf[n, SQ_HI1])
            for k in range(4):
                c = first + k
                if ni[c, PARENT] != n:
                    return 2, n, c, 0
                if ni[c, DEPTH] != ni[n, DEPTH] + 1:
                    return 3, n, c, 0
                want_lo0 = m0 if (k & 1) else nf[n, SQ_LO0]
                want_hi0 = nf[n, SQ_HI0] if (k & 1) else m0
                want_lo1 = m1 if (k & 2) else nf[n, SQ_LO1]
                want_hi1 = nf[n, SQ_HI1] if (k & 2) else m1
                if (nf[c, SQ_LO0] != want_lo0 or nf[c, SQ_HI0] != want_hi0
                        or nf[c, SQ_LO1] != want_lo1 or nf[c, SQ_HI1] != want_hi1):
                    return 4, n, c, 0
                sub_refs[n] += sub_refs[c]
                sub_act[n] += sub_act[c]
                if sub_refs[c] > 0:
                    for j in range(3):
                        if (nf[c, C_LO + j] < nf[n, C_LO + j]
                                or nf[c, C_HI + j] > nf[n, C_HI + j]):
                            return 13, n, c, 0
            continue
        stamp = meta[M_STAMP]
        length = 0
        quarters = 0
        r = ni[n, HEAD]
        while r >= 0:
            s = ri[r, R_SLOT]
            length += 1
            if length > ni[n, COUNT]:
                return 6, n, ni[n, COUNT], length
            if s < 0 or s >= n_slots or not alive[s]:
                return 7, n, s, 0
            if mark[s] == stamp + n + 1:
                return 8, n, s, 0
            mark[s] = stamp + n + 1  # a value no other leaf uses, so only repeats match
            if (ob[s, 0] > nf[n, SQ_HI0] or ob[s, 2] < nf[n, SQ_LO0]
                    or ob[s, 1] > nf[n, SQ_HI1] or ob[s, 3] < nf[n, SQ_LO1]):
                return 9, n, s, 0
            for j in range(3):
                if lo[s, j] < nf[n, C_LO + j] or hi[s, j] > nf[n, C_HI + j]:
                    return 12, n, s, 0
            refs_of[s] += 1
            quarters += _quarters(nf, n, ob[s, 0], ob[s, 1], ob[s, 2], ob[s, 3])
            if oact[s]:
                sub_act[n] += 1
            r = ri[r, R_NEXT]
        if length != ni[n, COUNT]:
            return 6, n, ni[n, COUNT], length
        if quarters != ni[n, SPLIT]:
            return 20, n, ni[n, SPLIT], quarters
        sub_refs[n] = length
        if length > cap and ni[n, DEPTH] < max_depth and \
                split_worthy(nf, ni, n, cap, max_depth, max_dup):
            return 16, n, length, 0
    meta[M_STAMP] += meta[M_NODE_TOP] + 2  # stamps used above must not be reused
    for idx in range(order.shape[0]):
        n = order[idx]
        if sub_refs[n] != ni[n, REFS]:
            return 10, n, ni[n, REFS], sub_refs[n]
        if sub_act[n] != ni[n, ACTIVE]:
            return 11, n, ni[n, ACTIVE], sub_act[n]
    leaves = np.empty(64, dtype=np.int64)
    stack = np.empty(STACK, dtype=np.int64)
    for s in range(n_slots):
        if not alive[s]:
            continue
        if (ob[s, 0] != lo[s, a0] or ob[s, 1] != lo[s, a1] or ob[s, 2] != hi[s, a0]
                or ob[s, 3] != hi[s, a1]):
            return 14, s, 0, 0
        if (ob[s, 0] < nf[0, SQ_LO0] or ob[s, 1] < nf[0, SQ_LO1] or ob[s, 2] > nf[0, SQ_HI0]
                or ob[s, 3] > nf[0, SQ_HI1]):
            return 18, s, 0, 0
        if oact[s] != (dynamic[s] and awake[s]):
            return 17, s, 0, 0
        leaves, n = leaves_of(nf, ni, ob[s, 0], ob[s, 1], ob[s, 2], ob[s, 3], leaves, stack)
        if refs_of[s] != n:
            return 15, s, refs_of[s], n
    return 0, 0, 0, 0
