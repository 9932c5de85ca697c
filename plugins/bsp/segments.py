"""Compiled 2D BSP over wall segments, built the Doom way (``leaf="convex"`` of the BSP backend).

Like Doom's node builders, partition lines are the lines of the segments themselves, and a
node is split until the segments in each leaf bound a convex region (a *subsector*).

Segments are directed: the front of a segment is on its right, looking from ``a`` to ``b``
(two-sided walls are given twice, once each way). A set of segments is convex when every
segment has all the others on its front side or on its line, colinear ones running the same
way. A segment that has some other segment (or part of one) behind it is a *witness* that
the leaf is not convex; only witnesses are partition candidates, each scored like the box
build, ``balance_weight * |front - back| + split_weight * cuts``. Splitting on a witness's
line leaves both children non-empty (the witness in front, what is behind it at the back), and
a line never separates anything again below itself, so the build ends without a depth limit
(``max_depth`` still caps it; leaves cut short are counted as not convex).

A segment crossing the partition line is cut at the crossing, one piece to each side (a
*split*). Distances within ``ON_LINE`` units of a line count as on it, so nearly colinear
segments are not cut into slivers.
"""
from __future__ import annotations

import numba
import numpy as np

from spatial.kernels import grow

from .kernels import grow_links, link_child

#: Points closer than this to a line (map units) are on it.
ON_LINE = 1e-6


@numba.njit(cache=True, nogil=True, inline="always")
def _line(ax, ay, bx, by):
    """Unit normal pointing to the front (right) side and offset: ``dist = nx*x + ny*y + d``."""
    dx, dy = bx - ax, by - ay
    length = np.sqrt(dx * dx + dy * dy)
    nx, ny = dy / length, -dx / length
    return nx, ny, -(nx * ax + ny * ay)


@numba.njit(cache=True, nogil=True, inline="always")
def _dist(nx, ny, d, x, y):
    v = nx * x + ny * y + d
    if abs(v) <= ON_LINE:
        return 0.0
    return v


@numba.njit(cache=True, nogil=True)
def _classify(nx, ny, d, lx, ly, ax, ay, bx, by):
    """0 front, 1 back, 2 crossing (line direction ``(lx, ly)`` decides colinear pieces)."""
    da = _dist(nx, ny, d, ax, ay)
    db = _dist(nx, ny, d, bx, by)
    if da == 0.0 and db == 0.0:
        return 0 if (bx - ax) * lx + (by - ay) * ly > 0.0 else 1
    if da >= 0.0 and db >= 0.0:
        return 0
    if da <= 0.0 and db <= 0.0:
        return 1
    return 2


@numba.njit(cache=True, nogil=True)
def _is_witness(p, work, start, count, pa, pb):
    """True when some other piece of the node lies (partly) behind piece ``p``'s line."""
    nx, ny, d = _line(pa[p, 0], pa[p, 1], pb[p, 0], pb[p, 1])
    lx, ly = pb[p, 0] - pa[p, 0], pb[p, 1] - pa[p, 1]
    for i in range(start, start + count):
        q = work[i]
        if q != p and _classify(nx, ny, d, lx, ly, pa[q, 0], pa[q, 1], pb[q, 0], pb[q, 1]) != 0:
            return True
    return False


@numba.njit(cache=True, nogil=True)
def _grow_pieces(pa, pb, pseg, needed):
    size = max(needed, 2 * len(pseg))
    na = np.empty((size, 2))
    nb = np.empty((size, 2))
    ns = np.empty(size, dtype=np.int64)
    na[:len(pseg)] = pa
    nb[:len(pseg)] = pb
    ns[:len(pseg)] = pseg
    return na, nb, ns


@numba.njit(cache=True, nogil=True)
def build_segment_tree(seg_a, seg_b, max_depth, balance_weight, split_weight, max_candidates):
    """Build the tree over directed segments ``seg_a -> seg_b`` (``(S, 2)`` each).

    Returns ``lines (K, 3)`` (unit front normal and offset; NaN for leaves), ``front``,
    ``back``, ``parent``, ``depth`` (rows breadth-first, children after parents), the leaves'
    pieces as CSR ``(leaf_start, leaf_count)`` over ``piece_a``, ``piece_b``, ``piece_seg``
    (the segment each piece came from), the number of cuts and the number of leaves left not
    convex by ``max_depth``.
    """
    n_seg = len(seg_a)
    pa = seg_a.copy()
    pb = seg_b.copy()
    pseg = np.arange(n_seg, dtype=np.int64)
    n_pieces = n_seg
    cap = 64
    lines = np.full((cap, 3), np.nan)
    front = np.full(cap, -1, dtype=np.int64)
    back = np.full(cap, -1, dtype=np.int64)
    parent = np.full(cap, -1, dtype=np.int64)
    depth = np.zeros(cap, dtype=np.int64)
    start = np.zeros(cap, dtype=np.int64)
    count = np.zeros(cap, dtype=np.int64)
    work = np.arange(max(n_seg, 1), dtype=np.int64)
    used = n_seg
    count[0] = n_seg
    n_nodes = 1
    cuts = 0
    nonconvex = 0
    witnesses = np.empty(max(n_seg, 1), dtype=np.int64)
    node = 0
    while node < n_nodes:
        s0, c = start[node], count[node]
        if len(witnesses) < c:
            witnesses = np.empty(c, dtype=np.int64)
        n_wit = 0
        for i in range(s0, s0 + c):
            if _is_witness(work[i], work, s0, c, pa, pb):
                witnesses[n_wit] = work[i]
                n_wit += 1
        if n_wit == 0:
            node += 1
            continue
        if depth[node] >= max_depth:
            nonconvex += 1
            node += 1
            continue
        # score evenly sampled witnesses
        step = max(1, n_wit // max_candidates)
        best = -1
        best_cost = np.inf
        for w in range(0, n_wit, step):
            p = witnesses[w]
            nx, ny, d = _line(pa[p, 0], pa[p, 1], pb[p, 0], pb[p, 1])
            lx, ly = pb[p, 0] - pa[p, 0], pb[p, 1] - pa[p, 1]
            nf = 0
            nb = 0
            ns = 0
            for i in range(s0, s0 + c):
                q = work[i]
                k = _classify(nx, ny, d, lx, ly, pa[q, 0], pa[q, 1], pb[q, 0], pb[q, 1])
                if k == 0:
                    nf += 1
                elif k == 1:
                    nb += 1
                else:
                    ns += 1
            cost = balance_weight * abs(nf - nb) + split_weight * ns
            if cost < best_cost:
                best_cost = cost
                best = p
        nx, ny, d = _line(pa[best, 0], pa[best, 1], pb[best, 0], pb[best, 1])
        lx, ly = pb[best, 0] - pa[best, 0], pb[best, 1] - pa[best, 1]
        if n_nodes + 2 > len(front):
            size = 2 * len(front) + 2
            lines2 = np.full((size, 3), np.nan)
            lines2[:len(lines)] = lines
            lines = lines2
            front, back, parent, depth = grow_links(front, back, parent, depth, size, n_nodes)
            start = grow(start, size)
            count = grow(count, size)
        lines[node, 0] = nx
        lines[node, 1] = ny
        lines[node, 2] = d
        # two passes: front pieces then back pieces, appended to ``work``
        for side in range(2):
            child = n_nodes
            n_nodes += 1
            link_child(node, child, side, front, back, parent, depth)
            front[child] = -1
            back[child] = -1
            if used + c > len(work):
                work = grow(work, used + c)
            start[child] = used
            m = 0
            for i in range(s0, s0 + c):
                q = work[i]
                k = _classify(nx, ny, d, lx, ly, pa[q, 0], pa[q, 1], pb[q, 0], pb[q, 1])
                if k == side:
                    work[used + m] = q
                    m += 1
                elif k == 2:
                    if side == 0:
                        # cut once, in the front pass: the new piece is the back half
                        da = nx * pa[q, 0] + ny * pa[q, 1] + d
                        db = nx * pb[q, 0] + ny * pb[q, 1] + d
                        t = da / (da - db)
                        x = pa[q, 0] + t * (pb[q, 0] - pa[q, 0])
                        y = pa[q, 1] + t * (pb[q, 1] - pa[q, 1])
                        if n_pieces + 1 > len(pseg):
                            pa, pb, pseg = _grow_pieces(pa, pb, pseg, n_pieces + 1)
                        r = n_pieces
                        n_pieces += 1
                        pseg[r] = pseg[q]
                        cuts += 1
                        if da > 0.0:  # a in front: q keeps a..x, r is x..b behind
                            pa[r, 0], pa[r, 1] = x, y
                            pb[r, 0], pb[r, 1] = pb[q, 0], pb[q, 1]
                            pb[q, 0], pb[q, 1] = x, y
                        else:  # b in front: q keeps x..b, r is a..x behind
                            pa[r, 0], pa[r, 1] = pa[q, 0], pa[q, 1]
                            pb[r, 0], pb[r, 1] = x, y
                            pa[q, 0], pa[q, 1] = x, y
                        work[used + m] = q
                        m += 1
                        # the back half takes q's place in this node's list for the back pass
                        work[i] = r
            count[child] = m
            used += m
        node += 1
    is_leaf = front[:n_nodes] < 0
    leaf_start = np.zeros(n_nodes, dtype=np.int64)
    leaf_count = np.zeros(n_nodes, dtype=np.int64)
    total = 0
    for k in range(n_nodes):
        if is_leaf[k]:
            total += count[k]
    piece_a = np.empty((total, 2))
    piece_b = np.empty((total, 2))
    piece_seg = np.empty(total, dtype=np.int64)
    pos = 0
    for k in range(n_nodes):
        leaf_start[k] = pos
        if is_leaf[k]:
            for i in range(start[k], start[k] + count[k]):
                q = work[i]
                piece_a[pos] = pa[q]
                piece_b[pos] = pb[q]
                piece_seg[pos] = pseg[q]
                pos += 1
            leaf_count[k] = count[k]
    return (lines[:n_nodes].copy(), front[:n_nodes].copy(), back[:n_nodes].copy(),
            parent[:n_nodes].copy(), depth[:n_nodes].copy(), leaf_start, leaf_count,
            piece_a, piece_b, piece_seg, cuts, nonconvex)
