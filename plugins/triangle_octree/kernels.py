"""Compiled kernels of the triangle octree (:mod:`plugins.triangle_octree`).

The leading underscore keeps the plugin loader from treating this module as a plugin.

Items are object slots. A slot flagged in ``is_tri`` is a triangle (corners ``tri[slot]``) and
goes into every cell it truly intersects (:func:`spatial.triangles.tri_box_overlap`); any other
slot is a box and goes into every cell its closed box overlaps. Every node also keeps a *cull
box*: the bounds of every item stored below it. Queries descend on cull boxes, which contain
each stored item whole, so a query that meets an item meets every cull box above a leaf
holding it; the exact test at the end decides (see :func:`exact_hits`).
"""
from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

import spatial.kernels as K
from spatial.triangles import tri_box_overlap

#: Cull boxes are widened by this fraction of their size (plus an absolute floor) for the
#: traversal only, so rounding in the compiled cull tests never drops a candidate.
CULL_EPS = 1e-9


class TriOctreeArrays(NamedTuple):
    """The tree and the item table, passed to the query, pair and check kernels as one
    argument (numba types a named tuple of arrays as one heterogeneous tuple).

    Per node: the cube ``cell_lo`` + ``size``, ``parent``, ``child`` ``(n, 8)`` (``-1`` where
    an octant has no node), a leaf's items ``items[leaf_start: leaf_start + leaf_count]`` and
    the ``cull`` box of the items below. Per slot: ``obj_lo/obj_hi``, ``is_tri`` and the
    corners ``tri`` ``(n, 3, 3)`` of a triangle item.
    """

    cell_lo: np.ndarray
    size: np.ndarray
    parent: np.ndarray
    child: np.ndarray
    leaf_start: np.ndarray
    leaf_count: np.ndarray
    items: np.ndarray
    cull_lo: np.ndarray
    cull_hi: np.ndarray
    obj_lo: np.ndarray
    obj_hi: np.ndarray
    is_tri: np.ndarray
    tri: np.ndarray


@numba.njit(cache=True, nogil=True)
def _item_in_cell(o, is_tri, tri, lo, hi, clo, chi):
    if is_tri[o]:
        return tri_box_overlap(tri[o, 0], tri[o, 1], tri[o, 2], clo, chi)
    return (lo[o, 0] <= chi[0] and clo[0] <= hi[o, 0] and lo[o, 1] <= chi[1]
            and clo[1] <= hi[o, 1] and lo[o, 2] <= chi[2] and clo[2] <= hi[o, 2])


@numba.njit(cache=True, nogil=True)
def _octants_met(o, is_tri, tri, lo, hi, child_lo, child_hi):
    """Bit ``k`` set when item ``o`` meets octant ``k`` (cells ``child_lo/hi[k]``).

    The closed overlap of the item's box (a triangle's own corner box) is decided per axis once
    for both halves: six comparisons for all eight octants, exact for a box item. A triangle
    meets no octant its box misses, and meets every one its box meets when that box lies in
    the node's cell and crosses at most one mid plane; only the rest need the exact test, a
    small share of a fine mesh's triangles.
    """
    triangle = is_tri[o]
    low = 0
    high = 0
    inside = True
    for a in range(3):  # scalars, not small arrays: this runs for every item at every level
        if triangle:
            box_lo = min(tri[o, 0, a], tri[o, 1, a], tri[o, 2, a])
            box_hi = max(tri[o, 0, a], tri[o, 1, a], tri[o, 2, a])
        else:
            box_lo = lo[o, a]
            box_hi = hi[o, a]
        if box_lo <= child_hi[0, a] and child_lo[0, a] <= box_hi:
            low |= 1 << a
        if box_lo <= child_hi[7, a] and child_lo[7, a] <= box_hi:
            high |= 1 << a
        if box_lo < child_lo[0, a] or box_hi > child_hi[7, a]:
            inside = False
    mask = 0
    for k in range(8):
        # octant k takes the high half on axis a when bit a of k is set
        if ((high & k) | (low & ~k)) & 7 == 7:
            mask |= 1 << k
    if not triangle or mask == 0:
        return mask
    # The triangle is connected and its corners reach both ends of its box, so inside the
    # cell it reaches both sides of the one plane its box crosses; crossing two or three
    # planes it may pass beside an octant.
    straddled = low & high
    if inside and straddled & (straddled - 1) == 0:
        return mask
    exact = 0
    for k in range(8):
        if (mask >> k) & 1 and tri_box_overlap(tri[o, 0], tri[o, 1], tri[o, 2], child_lo[k],
                                               child_hi[k]):
            exact |= 1 << k
    return exact


@numba.njit(cache=True, nogil=True)
def build(slots, lo, hi, is_tri, tri, root_lo, root_size, max_items, max_depth, min_size,
          reference_budget):
    """Build breadth-first; a node splits while it holds more than ``max_items`` items.

    A node splits only when its cell can halve (``size / 2 >= min_size``, ``depth <
    max_depth``), the split makes progress (some child holds fewer items than the node) and
    the item lists built so far stay within ``reference_budget`` entries (large items are
    copied into every cell they meet, so without it a few big boxes among many small ones
    would multiply down to ``max_depth``); children whose cell no item meets are not created.
    Each split reads the node's items once (:func:`_octants_met` gives all eight octants of
    an item at a time) and then writes the children's lists in octant order.
    Returns ``cell_lo (K, 3)``, ``size``,
    ``depth``, ``parent``, ``child (K, 8)`` (-1: none), the leaves' items as CSR
    ``(leaf_start, leaf_count, items)``, and the cull boxes.
    """
    cap = 64
    cell_lo = np.zeros((cap, 3))
    size = np.zeros(cap)
    depth = np.zeros(cap, dtype=np.int64)
    parent = np.full(cap, -1, dtype=np.int64)
    child = np.full((cap, 8), -1, dtype=np.int64)
    start = np.zeros(cap, dtype=np.int64)
    count = np.zeros(cap, dtype=np.int64)
    work = np.empty(max(len(slots), 16), dtype=np.int64)
    work[:len(slots)] = slots
    masks = np.empty(max(len(slots), 16), dtype=np.uint8)
    used = len(slots)
    cell_lo[0] = root_lo
    size[0] = root_size
    count[0] = len(slots)
    n_nodes = 1
    node = 0
    child_lo = np.empty((8, 3))
    child_hi = np.empty((8, 3))
    met = np.zeros(8, dtype=np.int64)
    made = np.full(8, -1, dtype=np.int64)
    while node < n_nodes:
        c = count[node]
        half = size[node] * 0.5
        if (c <= max_items or depth[node] >= max_depth or half < min_size
                or used + 8 * c > reference_budget):
            node += 1
            continue
        s0 = start[node]
        for k in range(8):
            for a in range(3):
                child_lo[k, a] = cell_lo[node, a] + (half if (k >> a) & 1 else 0.0)
                child_hi[k, a] = child_lo[k, a] + half
        if c > len(masks):
            masks = np.empty(max(c, 2 * len(masks)), dtype=np.uint8)
        met[:] = 0
        for i in range(c):
            bits = _octants_met(work[s0 + i], is_tri, tri, lo, hi, child_lo, child_hi)
            masks[i] = bits
            for k in range(8):
                met[k] += (bits >> k) & 1
        best = c
        for k in range(8):
            if met[k]:
                best = min(best, met[k])
        made[:] = -1
        if best >= c:  # no child is smaller: splitting cannot help (items meet at a point)
            node += 1
            continue
        total = 0
        for k in range(8):
            total += met[k]
        if used + total > len(work):
            work = K.grow(work, used + total)
        for k in range(8):
            m = met[k]
            if m == 0:
                continue
            if n_nodes == len(size):
                cell_lo = K.grow(cell_lo, n_nodes + 1)
                size = K.grow(size, n_nodes + 1)
                depth = K.grow(depth, n_nodes + 1)
                parent = K.grow(parent, n_nodes + 1)
                child = K.grow(child, n_nodes + 1)
                start = K.grow(start, n_nodes + 1)
                count = K.grow(count, n_nodes + 1)
            r = n_nodes
            n_nodes += 1
            cell_lo[r] = child_lo[k]
            size[r] = half
            depth[r] = depth[node] + 1
            parent[r] = node
            child[r, :] = -1
            start[r] = used
            count[r] = m
            w = used
            for i in range(c):
                if (masks[i] >> k) & 1:
                    work[w] = work[s0 + i]
                    w += 1
            used += m
            made[k] = r
        child[node, :] = made
        node += 1
    is_leaf = np.ones(n_nodes, dtype=np.bool_)
    for k in range(n_nodes):
        if parent[k] >= 0:
            is_leaf[parent[k]] = False
    items, leaf_start, leaf_count = K.compact_leaf_lists(is_leaf, start, count, work)
    cull_lo = np.full((n_nodes, 3), np.inf)
    cull_hi = np.full((n_nodes, 3), -np.inf)
    for k in range(n_nodes - 1, -1, -1):
        for i in range(leaf_start[k], leaf_start[k] + leaf_count[k]):
            o = items[i]
            for a in range(3):
                cull_lo[k, a] = min(cull_lo[k, a], lo[o, a])
                cull_hi[k, a] = max(cull_hi[k, a], hi[o, a])
        up = parent[k]
        if up >= 0:
            for a in range(3):
                cull_lo[up, a] = min(cull_lo[up, a], cull_lo[k, a])
                cull_hi[up, a] = max(cull_hi[up, a], cull_hi[k, a])
    return (cell_lo[:n_nodes].copy(), size[:n_nodes].copy(), depth[:n_nodes].copy(),
            parent[:n_nodes].copy(), child[:n_nodes].copy(), leaf_start, leaf_count, items,
            cull_lo, cull_hi)


@numba.njit(cache=True, nogil=True)
def candidates(kind, params, fplanes, tree, slot_limit, trace):
    """Distinct item slots in the leaves a query reaches (the shape encoding of
    :mod:`spatial.kernels`).

    Box, sphere and ray queries test a node's cell clipped to its cull box: a point where the
    query meets an item lies in some leaf cell (cells cover the root, and a cell an item meets
    exists and stores it) and in the cull box of every node above, so no hit is lost. The
    frustum test is not decided by one point, so frusta test the whole cull box.

    Returns ``(slots, nodes visited, visited rows, culled rows)``; rows only when ``trace``.
    """
    child, cell_lo, size, cull_lo, cull_hi = (tree.child, tree.cell_lo, tree.size, tree.cull_lo,
                                              tree.cull_hi)
    leaf_start, leaf_count, items = tree.leaf_start, tree.leaf_count, tree.items
    qlo, qhi, scalar, inv = K.unpack_shape(kind, params)
    n_nodes = len(leaf_start)
    seen, out, rows, culled = K.candidate_buffers(slot_limit, n_nodes, trace)
    n_out = 0
    n_rows = 0
    n_culled = 0
    visited = 0
    stack = np.empty(8 * 64 + 8, dtype=np.int64)
    if n_nodes == 0 or cull_lo[0, 0] > cull_hi[0, 0]:
        return out[:0], 0, rows[:0], culled[:0]
    stack[0] = 0
    top = 1
    blo = np.empty((1, 3))  # the node's padded cull box, as row 0 for the row predicates
    bhi = np.empty((1, 3))
    while top:
        top -= 1
        node = stack[top]
        visited += 1
        for a in range(3):
            pad = CULL_EPS * (cull_hi[node, a] - cull_lo[node, a]) + CULL_EPS * (
                1.0 + abs(cull_lo[node, a]) + abs(cull_hi[node, a]))
            blo[0, a] = cull_lo[node, a]
            bhi[0, a] = cull_hi[node, a]
            if kind != K.FRUSTUM:
                blo[0, a] = max(blo[0, a], cell_lo[node, a])
                bhi[0, a] = min(bhi[0, a], cell_lo[node, a] + size[node])
            blo[0, a] -= pad
            bhi[0, a] += pad
        meets = K.shape_may_meet_row(kind, qlo, qhi, scalar, inv, fplanes, blo, bhi, 0, CULL_EPS)
        n_rows, n_culled = K.record_visit(trace, meets, node, rows, n_rows, culled, n_culled)
        if not meets:
            continue
        if child[node, 0] < 0 and child[node, 1] < 0 and child[node, 2] < 0 and child[node, 3] < 0 \
                and child[node, 4] < 0 and child[node, 5] < 0 and child[node, 6] < 0 \
                and child[node, 7] < 0:
            out, n_out = K.push_unseen(items, leaf_start[node], leaf_count[node], seen, out, n_out)
            continue
        for k in range(8):
            if child[node, k] >= 0:
                stack, top = K.push(stack, top, child[node, k])
    return out[:n_out], visited, rows[:n_rows], culled[:n_culled]


# --------------------------------------------------------------------------- exact tests
@numba.njit(cache=True, nogil=True)
def closest_on_triangle(p, a, b, c):
    """Closest point of triangle ``abc`` to ``p`` (Ericson, Real-Time Collision Detection 5.1.5)."""
    ab = b - a
    ac = c - a
    ap = p - a
    d1 = K.dot3(ab, ap)
    d2 = K.dot3(ac, ap)
    if d1 <= 0.0 and d2 <= 0.0:
        return a.copy()
    bp = p - b
    d3 = K.dot3(ab, bp)
    d4 = K.dot3(ac, bp)
    if d3 >= 0.0 and d4 <= d3:
        return b.copy()
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        v = d1 / (d1 - d3) if d1 != d3 else 0.0
        return a + v * ab
    cp = p - c
    d5 = K.dot3(ab, cp)
    d6 = K.dot3(ac, cp)
    if d6 >= 0.0 and d5 <= d6:
        return c.copy()
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        w = d2 / (d2 - d6) if d2 != d6 else 0.0
        return a + w * ac
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and (d4 - d3) >= 0.0 and (d5 - d6) >= 0.0:
        den = (d4 - d3) + (d5 - d6)
        w = (d4 - d3) / den if den != 0.0 else 0.0
        return b + w * (c - b)
    den = va + vb + vc
    if den == 0.0:  # degenerate triangle: nearest of its three edges
        best = a.copy()
        best_d = np.inf
        for e0, e1 in ((a, b), (b, c), (c, a)):
            e = e1 - e0
            ee = K.dot3(e, e)
            t = 0.0 if ee == 0.0 else min(max(K.dot3(p - e0, e) / ee, 0.0), 1.0)
            q = e0 + t * e
            d = K.dot3(q - p, q - p)
            if d < best_d:
                best_d = d
                best = q
        return best
    v = vb / den
    w = vc / den
    return a + ab * v + ac * w


@numba.njit(cache=True, nogil=True)
def ray_triangle(origin, direction, a, b, c):
    """Entry ``t`` of the ray into the closed triangle (Möller–Trumbore); ``inf`` on a miss.

    A ray lying in the triangle's plane counts as a miss (it meets a zero-area cross-section).
    """
    e1 = b - a
    e2 = c - a
    px = direction[1] * e2[2] - direction[2] * e2[1]
    py = direction[2] * e2[0] - direction[0] * e2[2]
    pz = direction[0] * e2[1] - direction[1] * e2[0]
    det = e1[0] * px + e1[1] * py + e1[2] * pz
    if det == 0.0:
        return np.inf
    inv = 1.0 / det
    s = origin - a
    u = (s[0] * px + s[1] * py + s[2] * pz) * inv
    if u < 0.0 or u > 1.0:
        return np.inf
    qx = s[1] * e1[2] - s[2] * e1[1]
    qy = s[2] * e1[0] - s[0] * e1[2]
    qz = s[0] * e1[1] - s[1] * e1[0]
    v = (direction[0] * qx + direction[1] * qy + direction[2] * qz) * inv
    if v < 0.0 or u + v > 1.0:
        return np.inf
    t = (e2[0] * qx + e2[1] * qy + e2[2] * qz) * inv
    if t < 0.0:
        return np.inf
    return t


@numba.njit(cache=True, nogil=True)
def exact_triangles(kind, params, fplanes, slots, tri):
    """Which triangles ``tri[slots]`` really meet the query, and the ray's ``t`` for each.

    Box and point: :func:`tri_box_overlap`; sphere: closest point within ``radius``; ray:
    :func:`ray_triangle` up to ``max_t``; frustum: not all three corners strictly outside one
    plane (conservative, like the box test it replaces).
    """
    qlo, qhi, scalar, inv = K.unpack_shape(kind, params)
    center = origin = qlo  # the shape's first vector: box lo, sphere centre or ray origin
    direction = qhi
    radius = max_t = scalar
    n = len(slots)
    hit = np.zeros(n, dtype=np.bool_)
    ts = np.full(n, np.inf)
    r2 = radius * radius
    for k in range(n):
        o = slots[k]
        a, b, c = tri[o, 0], tri[o, 1], tri[o, 2]
        if kind == K.BOX:
            hit[k] = tri_box_overlap(a, b, c, qlo, qhi)
        elif kind == K.SPHERE:
            q = closest_on_triangle(center, a, b, c)
            hit[k] = K.dot3(q - center, q - center) <= r2
        elif kind == K.RAY:
            t = ray_triangle(origin, direction, a, b, c)
            if t < np.inf and t <= max_t:  # a miss is inf, and max_t may be inf too
                hit[k] = True
                ts[k] = t
        else:
            keep = True
            for p in range(fplanes.shape[0]):
                outside = 0
                for v in (a, b, c):
                    if fplanes[p, 0] * v[0] + fplanes[p, 1] * v[1] + fplanes[p, 2] * v[2] \
                            + fplanes[p, 3] < 0.0:
                        outside += 1
                if outside == 3:
                    keep = False
                    break
            hit[k] = keep
    return hit, ts


# --------------------------------------------------------------------------- pairs, checks
@numba.njit(cache=True, nogil=True)
def leaf_pairs(tree, active, only_active):
    """Overlapping box pairs among the items of each leaf, with duplicates across leaves."""
    leaf_start, leaf_count, items, lo, hi = (tree.leaf_start, tree.leaf_count, tree.items,
                                             tree.obj_lo, tree.obj_hi)
    n_nodes = len(leaf_start)
    out = np.empty((64, 2), dtype=np.int64)
    m = 0
    node_tests = np.zeros(n_nodes, dtype=np.int64)
    for node in range(n_nodes):
        m0 = m
        out, m, tests = K.list_pairs(items, leaf_start[node], leaf_count[node], lo, hi, active,
                                     only_active, out, m)
        node_tests[node] = tests
        for r in range(m0, m):  # each pair as (smaller slot, larger slot)
            a = out[r, 0]
            if a > out[r, 1]:
                out[r, 0] = out[r, 1]
                out[r, 1] = a
    return out[:m], node_tests


@numba.njit(cache=True, nogil=True)
def check(tree, alive_slots, slot_limit):
    """0 when consistent, else ``(code, where)`` (see the backend's ``_validate``).

    Every alive item is found, by descending into every child its geometry meets, in exactly
    the leaves that store it; children's cells are octants of their parent's; cull boxes hold
    their items.
    """
    cell_lo, size, parent, child = tree.cell_lo, tree.size, tree.parent, tree.child
    leaf_start, leaf_count, items, cull_lo, cull_hi = (tree.leaf_start, tree.leaf_count,
                                                       tree.items, tree.cull_lo, tree.cull_hi)
    lo, hi, is_tri, tri = tree.obj_lo, tree.obj_hi, tree.is_tri, tree.tri
    n_nodes = len(leaf_start)
    for k in range(1, n_nodes):
        up = parent[k]
        if up < 0 or up >= k:
            return 1, k
        if size[k] * 2.0 != size[up]:
            return 2, k
        for a in range(3):
            if cell_lo[k, a] < cell_lo[up, a] or cell_lo[k, a] + size[k] > cell_lo[up, a] + size[up]:
                return 2, k
    stored = np.zeros(max(slot_limit, 1), dtype=np.int64)
    alive = np.zeros(max(slot_limit, 1), dtype=np.bool_)
    for o in alive_slots:
        alive[o] = True
    clo = np.empty(3)
    chi = np.empty(3)
    for k in range(n_nodes):
        for i in range(leaf_start[k], leaf_start[k] + leaf_count[k]):
            o = items[i]
            if o < 0 or o >= slot_limit or not alive[o]:
                return 6, k
            stored[o] += 1
            for a in range(3):
                clo[a] = cell_lo[k, a]
                chi[a] = cell_lo[k, a] + size[k]
                if lo[o, a] < cull_lo[k, a] or hi[o, a] > cull_hi[k, a]:
                    return 3, k
            if not _item_in_cell(o, is_tri, tri, lo, hi, clo, chi):
                return 4, o
    stack = np.empty(8 * 64 + 8, dtype=np.int64)
    for o in alive_slots:
        reached = 0
        stack, top = K.push(stack, 0, 0)
        while top:
            top -= 1
            node = stack[top]
            is_leaf = True
            for q in range(8):
                c = child[node, q]
                if c < 0:
                    continue
                is_leaf = False
                for a in range(3):
                    clo[a] = cell_lo[c, a]
                    chi[a] = cell_lo[c, a] + size[c]
                if _item_in_cell(o, is_tri, tri, lo, hi, clo, chi):
                    stack, top = K.push(stack, top, c)
            if is_leaf:
                reached += 1
        if reached != stored[o]:
            return 5, o
    return 0, 0
