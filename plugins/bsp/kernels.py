"""Compiled kernels of the BSP backend (:mod:`plugins.bsp`): build, queries, pairs, checks.

The leading underscore keeps the plugin loader from treating this module as a plugin.

Plane side of a box
-------------------
A plane is ``(nx, ny, nz, d)``; its *front* is the closed half-space ``n . x + d >= 0`` and its
*back* the closed half-space ``n . x + d <= 0``. For a box, :func:`box_side_range` returns the
smallest and largest value of ``n . x + d`` over its corners, summing the per-axis extremes in
the same order as :func:`point_side` sums the terms for a point. Rounding is monotone, so for
every float point ``p`` inside the box ``dmin <= point_side(p) <= dmax`` holds *exactly* in
floating point. That is what makes the tree exact:

* an object goes to the front child when ``dmax >= 0`` and to the back child when ``dmin <= 0``
  (a box touching the plane goes to both: closed semantics);
* a query box visits the front when its ``dmax >= 0`` and the back when its ``dmin <= 0``;
* if an object and a query box overlap, a float corner ``p`` of their intersection lies in
  both, and whichever side ``p`` is on, both the object and the query go there.

Every node also keeps the bounding box of all object boxes stored below it (``cull`` box).
Because it contains each of those boxes whole, a ray, sphere or frustum that the reference
predicate says meets an object also meets the cull box of every node holding it (the slab,
clamp and positive-vertex formulas are monotone in the box), so culling on it never loses a hit.
"""
from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from spatial.kernels import (
    BOX,
    candidate_buffers,
    compact_leaf_lists,
    grow,
    list_pairs,
    overlap_row,
    push_unseen,
    ray_setup,
    ray_slab_row,
    record_visit,
    shape_may_meet_row,
    unpack_shape,
)

# Relative slack for culling nodes with sphere and frustum tests, whose reference predicates
# run in numpy with a summation order that may differ from the compiled one by a rounding step.
CULL_SLACK = 1e-9


class BspArrays(NamedTuple):
    """A compiled tree and the object table, passed to the query, pair and check kernels as
    one argument (numba types a named tuple of arrays as one heterogeneous tuple).

    Per node: ``planes`` ``(n, 4)`` (inner nodes), children ``front/back`` (``front < 0`` at a
    leaf), ``parent``, the ``region`` box the node's cell spans, the ``cull`` box of every
    object below, a leaf's objects ``items[leaf_start: leaf_start + leaf_count]`` and the
    ``subtree`` reference count. Per slot: ``refcount`` (leaves holding it), ``obj_lo/obj_hi``
    and ``obj_ids``.
    """

    planes: np.ndarray
    front: np.ndarray
    back: np.ndarray
    parent: np.ndarray
    region_lo: np.ndarray
    region_hi: np.ndarray
    cull_lo: np.ndarray
    cull_hi: np.ndarray
    leaf_start: np.ndarray
    leaf_count: np.ndarray
    items: np.ndarray
    subtree: np.ndarray
    refcount: np.ndarray
    obj_lo: np.ndarray
    obj_hi: np.ndarray
    obj_ids: np.ndarray


# --------------------------------------------------------------------------- tree links
@numba.njit(cache=True, nogil=True, inline="always")
def link_child(node, child, side, front, back, parent, depth) -> None:
    """Make ``child`` the front (``side`` 0) or back (1) child of ``node``, one level deeper."""
    if side == 0:
        front[node] = child
    else:
        back[node] = child
    parent[child] = node
    depth[child] = depth[node] + 1


@numba.njit(cache=True, nogil=True)
def grow_links(front, back, parent, depth, capacity, n_nodes):
    """The link arrays grown to ``capacity`` rows; front and back links past ``n_nodes`` are -1
    (no child)."""
    front = grow(front, capacity)
    back = grow(back, capacity)
    front[n_nodes:] = -1
    back[n_nodes:] = -1
    return front, back, grow(parent, capacity), grow(depth, capacity)


# --------------------------------------------------------------------------- plane sides
@numba.njit(cache=True, nogil=True, inline="always")
def box_side_range(plane, lo, hi):
    """``(dmin, dmax)`` of ``n . x + d`` over the corners of the box ``[lo, hi]``."""
    a0 = plane[0] * lo[0]
    b0 = plane[0] * hi[0]
    a1 = plane[1] * lo[1]
    b1 = plane[1] * hi[1]
    a2 = plane[2] * lo[2]
    b2 = plane[2] * hi[2]
    dmin = min(a0, b0) + min(a1, b1) + min(a2, b2) + plane[3]
    dmax = max(a0, b0) + max(a1, b1) + max(a2, b2) + plane[3]
    return dmin, dmax


@numba.njit(cache=True, nogil=True, inline="always")
def point_side(plane, p):
    """``n . p + d`` summed in the same order as :func:`box_side_range`."""
    return plane[0] * p[0] + plane[1] * p[1] + plane[2] * p[2] + plane[3]


@numba.njit(cache=True, nogil=True, inline="always")
def goes_to(plane, lo, hi, side):
    """Whether an object with box ``[lo, hi]`` goes to the front (``side`` 0) or back (1) child.

    The one place that decides where an object goes; the refit and the checks descend with the
    same closed test. Objects only have boxes, so a straddler is copied to both sides. Geometry
    known exactly (Doom's wall segments) would be cut in two here instead, each piece going to
    one side.
    """
    dmin, dmax = box_side_range(plane, lo, hi)
    if side == 0:
        return dmax >= 0.0
    return dmin <= 0.0


@numba.njit(cache=True, nogil=True)
def is_axial(plane):
    """True when exactly one normal component is non-zero."""
    zeros = 0
    for a in range(3):
        if plane[a] == 0.0:
            zeros += 1
    return zeros == 2


@numba.njit(cache=True, nogil=True)
def holds_point(leaf, p, planes, front, parent):
    """True when ``leaf`` is the leaf of the float point ``p``, ties on a plane going front.

    Each point has exactly one such leaf, and every object whose box contains ``p`` is stored
    in it (see the module docstring), so it is a canonical meeting place for two overlapping
    objects. Walking up from the leaf stops at the first plane that sends ``p`` elsewhere.
    """
    node = leaf
    while parent[node] >= 0:
        up = parent[node]
        if (point_side(planes[up], p) >= 0.0) != (front[up] == node):
            return False
        node = up
    return True


# --------------------------------------------------------------------------- build
@numba.njit(cache=True, nogil=True)
def _gather_candidates(objs, lo, hi, box_lo, box_hi, pool, pool_source, use_pool, inherited,
                       qualifying, axes, max_candidates, out_planes, out_source):
    """Fill ``out_planes`` with at most ``max_candidates`` planes that cut the box strictly.

    A plane that does not cut the node's box strictly cannot separate its objects (they would
    all touch or lie on one side), so it is never worth evaluating. With a pool (planes the scene
    offered) the planes of ``inherited`` (pool rows that cut the parent's box; a child's box lies
    inside its parent's, so no other row can cut it) that cut this box are written to
    ``qualifying`` and sampled at an even stride; otherwise the box faces of an evenly strided
    sample of the node's objects are used, on the split axes only.

    Returns the number of candidates and the number of qualifying pool rows.
    """
    count = 0
    m = 0
    if use_pool:
        for i in range(len(inherited)):
            k = inherited[i]
            dmin, dmax = box_side_range(pool[k], box_lo, box_hi)
            if dmin < 0.0 < dmax:
                qualifying[m] = k
                m += 1
        take = min(m, max_candidates)
        for c in range(take):
            k = qualifying[(c * m) // take]
            out_planes[count, :] = pool[k]
            out_source[count] = pool_source[k]
            count += 1
        return count, m
    n = len(objs)
    faces_per_object = 2 * len(axes)
    sampled = max(1, max_candidates // faces_per_object)
    sampled = min(sampled, n)
    for s in range(sampled):
        o = objs[(s * n) // sampled]
        for ai in range(len(axes)):
            a = axes[ai]
            for side in range(2):
                x = lo[o, a] if side == 0 else hi[o, a]
                if not (box_lo[a] < x < box_hi[a]):
                    continue
                if count >= out_planes.shape[0]:
                    return count, m
                for b in range(3):
                    out_planes[count, b] = 0.0
                out_planes[count, a] = 1.0
                out_planes[count, 3] = -x
                out_source[count] = -1
                count += 1
    return count, m


@numba.njit(cache=True, inline="always")
def _inherit_region(region_lo, region_hi, node, child, plane, side, axial, keep_inside):
    """Give ``child`` (``side`` 0 front, 1 back) its parent's region box, cut by the parent's
    ``plane`` when it is axial; ``keep_inside`` clamps the cut into the box, so a region never
    turns inside out."""
    region_lo[child, :] = region_lo[node, :]
    region_hi[child, :] = region_hi[node, :]
    if not axial:
        return
    a = 0
    while plane[a] == 0.0:
        a += 1
    x = -plane[3] / plane[a]
    if keep_inside:
        x = min(max(x, region_lo[child, a]), region_hi[child, a])
    # front of ``s*x + d >= 0`` is x >= -d/s for s > 0 and x <= -d/s for s < 0
    if (side == 0) == (plane[a] > 0.0):
        region_lo[child, a] = max(region_lo[child, a], x)
    else:
        region_hi[child, a] = min(region_hi[child, a], x)


@numba.njit(cache=True, nogil=True)
def build_tree(objs0, lo, hi, pool, pool_source, use_pool, axes, max_depth, min_objects,
               balance_weight, split_weight, max_candidates, axial_bonus, reference_budget):
    """Build the tree breadth-first over the object slots ``objs0``.

    A node holding more than ``min_objects`` objects above ``max_depth`` evaluates its candidate
    planes with ``cost = balance_weight*|front_only - back_only| + split_weight*straddlers``
    (non-axial planes cost ``(cost + 1) * axial_bonus - 1``) and splits on the cheapest plane
    that leaves fewer objects on each side than the node holds; if none does, or the total
    number of references would exceed ``reference_budget``, it stays a leaf.

    Returns the node arrays (rows breadth-first, parents before children) and the leaves'
    object slots as CSR ``(leaf_start, leaf_count, items)``.
    """
    n0 = len(objs0)
    cap = 64
    planes = np.full((cap, 4), np.nan)
    source = np.full(cap, -1, dtype=np.int64)
    front = np.full(cap, -1, dtype=np.int64)
    back = np.full(cap, -1, dtype=np.int64)
    parent = np.full(cap, -1, dtype=np.int64)
    depth = np.zeros(cap, dtype=np.int64)
    region_lo = np.zeros((cap, 3))
    region_hi = np.zeros((cap, 3))
    cull_lo = np.zeros((cap, 3))
    cull_hi = np.zeros((cap, 3))
    seg_start = np.zeros(cap, dtype=np.int64)
    seg_count = np.zeros(cap, dtype=np.int64)
    # object lists of every node, each a segment of ``work`` (children appended at the end)
    work = np.empty(max(2 * n0, 16), dtype=np.int64)
    work[:n0] = objs0
    used = n0

    # root: region and cull box are both the bounds of every object
    for a in range(3):
        region_lo[0, a] = np.inf
        region_hi[0, a] = -np.inf
    for i in range(n0):
        o = objs0[i]
        for a in range(3):
            region_lo[0, a] = min(region_lo[0, a], lo[o, a])
            region_hi[0, a] = max(region_hi[0, a], hi[o, a])
    if n0 == 0:
        region_lo[0, :] = 0.0
        region_hi[0, :] = 0.0
    cull_lo[0, :] = region_lo[0, :]
    cull_hi[0, :] = region_hi[0, :]
    if n0 == 0:
        cull_lo[0, :] = np.inf
        cull_hi[0, :] = -np.inf
    seg_start[0] = 0
    seg_count[0] = n0
    # pool rows that may still cut each node's box, shared by both children of a node
    qual = np.arange(len(pool) if use_pool else 0, dtype=np.int64)
    qual_used = len(qual)
    qual_start = np.zeros(cap, dtype=np.int64)
    qual_count = np.zeros(cap, dtype=np.int64)
    qual_count[0] = qual_used
    n_nodes = 1
    references = n0  # references held by the current frontier of leaves-to-be

    cand_cap = max(max_candidates, 2 * len(axes)) + 6
    cand = np.empty((cand_cap, 4))
    cand_source = np.empty(cand_cap, dtype=np.int64)
    test_lo = np.empty(3)
    test_hi = np.empty(3)
    head = 0
    while head < n_nodes:
        node = head
        head += 1
        start = seg_start[node]
        n = seg_count[node]
        if n <= min_objects or depth[node] >= max_depth:
            continue
        # candidates must cut the part of the region its objects cover; that box is never
        # empty, since every object of a node meets the node's region box on every axis
        for a in range(3):
            test_lo[a] = max(region_lo[node, a], cull_lo[node, a])
            test_hi[a] = min(region_hi[node, a], cull_hi[node, a])
        objs = work[start:start + n]
        qual = grow(qual, qual_used + qual_count[node])
        count, n_qualifying = _gather_candidates(
            objs, lo, hi, test_lo, test_hi, pool, pool_source, use_pool,
            qual[qual_start[node]:qual_start[node] + qual_count[node]],
            qual[qual_used:qual_used + qual_count[node]], axes, max_candidates, cand, cand_source)
        best = -1
        best_cost = np.inf
        best_front = 0
        best_back = 0
        for c in range(count):
            plane = cand[c]
            front_only = 0
            back_only = 0
            straddle = 0
            for i in range(n):
                o = objs[i]
                dmin, dmax = box_side_range(plane, lo[o], hi[o])
                if dmin > 0.0:
                    front_only += 1
                elif dmax < 0.0:
                    back_only += 1
                else:
                    straddle += 1
            n_front = front_only + straddle
            n_back = back_only + straddle
            if n_front >= n or n_back >= n:
                continue  # no progress: one side would hold everything
            cost = balance_weight * abs(front_only - back_only) + split_weight * straddle
            if not is_axial(plane):
                cost = (cost + 1.0) * axial_bonus - 1.0
            if cost < best_cost:
                best_cost = cost
                best = c
                best_front = n_front
                best_back = n_back
        if best < 0:
            continue
        if references - n + best_front + best_back > reference_budget:
            continue
        references += best_front + best_back - n

        needed = n_nodes + 2
        if needed > len(depth):
            new_cap = 2 * needed
            planes = grow(planes, new_cap)
            planes[n_nodes:] = np.nan
            source = grow(source, new_cap)
            front, back, parent, depth = grow_links(front, back, parent, depth, new_cap, n_nodes)
            region_lo = grow(region_lo, new_cap)
            region_hi = grow(region_hi, new_cap)
            cull_lo = grow(cull_lo, new_cap)
            cull_hi = grow(cull_hi, new_cap)
            seg_start = grow(seg_start, new_cap)
            seg_count = grow(seg_count, new_cap)
            qual_start = grow(qual_start, new_cap)
            qual_count = grow(qual_count, new_cap)
            source[n_nodes:] = -1
        survivors = qual_used  # both children inherit the pool rows that cut this node's box
        qual_used += n_qualifying
        plane = cand[best].copy()
        planes[node, :] = plane
        source[node] = cand_source[best]
        work = grow(work, used + best_front + best_back)
        objs = work[start:start + n]
        axial = is_axial(plane)
        for side in range(2):
            child = n_nodes
            n_nodes += 1
            link_child(node, child, side, front, back, parent, depth)
            qual_start[child] = survivors
            qual_count[child] = n_qualifying
            seg_start[child] = used
            m = 0
            for a in range(3):
                cull_lo[child, a] = np.inf
                cull_hi[child, a] = -np.inf
            for i in range(n):
                o = objs[i]
                if goes_to(plane, lo[o], hi[o], side):
                    work[used + m] = o
                    m += 1
                    for a in range(3):
                        cull_lo[child, a] = min(cull_lo[child, a], lo[o, a])
                        cull_hi[child, a] = max(cull_hi[child, a], hi[o, a])
            seg_count[child] = m
            used += m
            _inherit_region(region_lo, region_hi, node, child, plane, side, axial, False)
            if not axial:
                # the region is a polytope; its box is approximated by the objects' box on the
                # split axes (a 2D region stays a full-height prism). Never empty: each object's
                # box meets the parent's box and lies in the objects' box.
                for ai in range(len(axes)):
                    a = axes[ai]
                    region_lo[child, a] = max(region_lo[child, a], cull_lo[child, a])
                    region_hi[child, a] = min(region_hi[child, a], cull_hi[child, a])

    # leaves' object lists, compacted
    is_leaf = front[:n_nodes] < 0
    items, leaf_start, leaf_count = compact_leaf_lists(is_leaf, seg_start, seg_count, work)
    subtree = np.zeros(n_nodes, dtype=np.int64)
    for node in range(n_nodes - 1, -1, -1):
        if is_leaf[node]:
            subtree[node] = leaf_count[node]
        else:
            subtree[node] = subtree[front[node]] + subtree[back[node]]
    return (planes[:n_nodes].copy(), source[:n_nodes].copy(), front[:n_nodes].copy(),
            back[:n_nodes].copy(), parent[:n_nodes].copy(), depth[:n_nodes].copy(),
            region_lo[:n_nodes].copy(), region_hi[:n_nodes].copy(), cull_lo[:n_nodes].copy(),
            cull_hi[:n_nodes].copy(), leaf_start, leaf_count, items, subtree)


# --------------------------------------------------------------------------- refit
@numba.njit(cache=True, inline="always")
def _push_sides_reached(plane, blo, bhi, front_child, back_child, stack, top):
    """Push the children of a node the box ``blo, bhi`` reaches (back first, so the front
    child is popped first); returns the new stack top."""
    dmin, dmax = box_side_range(plane, blo, bhi)
    if dmin <= 0.0:
        stack[top] = back_child
        top += 1
    if dmax >= 0.0:
        stack[top] = front_child
        top += 1
    return top


@numba.njit(cache=True, nogil=True)
def refit_tree(planes, front, back, parent, leaf_start, leaf_count, items, touched, reinsert,
               lo, hi, axes):
    """Apply edits without choosing new planes: the tree keeps its planes, leaves change.

    Every reference to a slot flagged in ``touched`` (removed, moved or new) is dropped, then
    each slot of ``reinsert`` (the touched slots still alive, with their current bounds) is
    pushed down with the same closed side test as the build, into every leaf its box reaches.
    Returns the new leaves' CSR ``(leaf_start, leaf_count, items)`` and the nodes' cull boxes,
    region boxes (as the build makes them; ``axes`` are the split axes) and subtree counts
    recomputed from them.
    """
    n_nodes = len(front)
    # leaves reached by each reinserted slot, found once and kept as (leaf, slot) rows
    reached = np.empty((max(2 * len(reinsert), 4), 2), dtype=np.int64)
    n_reached = 0
    stack = np.empty(n_nodes + 1, dtype=np.int64)
    for k in range(len(reinsert)):
        o = reinsert[k]
        stack[0] = 0
        top = 1
        while top:
            top -= 1
            node = stack[top]
            if front[node] < 0:
                if n_reached == reached.shape[0]:
                    reached = grow(reached, 2 * n_reached)
                reached[n_reached, 0] = node
                reached[n_reached, 1] = o
                n_reached += 1
                continue
            top = _push_sides_reached(planes[node], lo[o], hi[o], front[node], back[node], stack, top)
    new_count = np.zeros(n_nodes, dtype=np.int64)
    for node in range(n_nodes):
        if front[node] < 0:
            for i in range(leaf_start[node], leaf_start[node] + leaf_count[node]):
                if not touched[items[i]]:
                    new_count[node] += 1
    for r in range(n_reached):
        new_count[reached[r, 0]] += 1
    new_start = np.zeros(n_nodes, dtype=np.int64)
    total = 0
    for node in range(n_nodes):
        new_start[node] = total
        total += new_count[node]
    new_items = np.empty(total, dtype=np.int64)
    fill = new_start.copy()
    for node in range(n_nodes):
        if front[node] < 0:
            for i in range(leaf_start[node], leaf_start[node] + leaf_count[node]):
                if not touched[items[i]]:
                    new_items[fill[node]] = items[i]
                    fill[node] += 1
    for r in range(n_reached):
        node = reached[r, 0]
        new_items[fill[node]] = reached[r, 1]
        fill[node] += 1

    # cull boxes and subtree counts bottom-up (children follow their parents in row order)
    cull_lo = np.full((n_nodes, 3), np.inf)
    cull_hi = np.full((n_nodes, 3), -np.inf)
    subtree = np.zeros(n_nodes, dtype=np.int64)
    for node in range(n_nodes - 1, -1, -1):
        if front[node] < 0:
            subtree[node] = new_count[node]
            for i in range(new_start[node], new_start[node] + new_count[node]):
                o = new_items[i]
                for a in range(3):
                    cull_lo[node, a] = min(cull_lo[node, a], lo[o, a])
                    cull_hi[node, a] = max(cull_hi[node, a], hi[o, a])
        if node > 0:
            up = parent[node]
            subtree[up] += subtree[node]
            for a in range(3):
                cull_lo[up, a] = min(cull_lo[up, a], cull_lo[node, a])
                cull_hi[up, a] = max(cull_hi[up, a], cull_hi[node, a])
    # region boxes top-down, exactly as the build makes them
    region_lo = np.zeros((n_nodes, 3))
    region_hi = np.zeros((n_nodes, 3))
    if n_nodes and subtree[0] > 0:
        region_lo[0, :] = cull_lo[0, :]
        region_hi[0, :] = cull_hi[0, :]
    for node in range(n_nodes):
        if front[node] < 0:
            continue
        plane = planes[node]
        axial = is_axial(plane)
        for side in range(2):
            child = front[node] if side == 0 else back[node]
            _inherit_region(region_lo, region_hi, node, child, plane, side, axial, True)
            if not axial and subtree[child] > 0:
                for ai in range(len(axes)):
                    a = axes[ai]
                    region_lo[child, a] = min(max(region_lo[child, a], cull_lo[child, a]),
                                              region_hi[child, a])
                    region_hi[child, a] = max(min(region_hi[child, a], cull_hi[child, a]),
                                              region_lo[child, a])
    return new_start, new_count, new_items, cull_lo, cull_hi, region_lo, region_hi, subtree


# --------------------------------------------------------------------------- queries
@numba.njit(cache=True, nogil=True)
def query_candidates(kind, params, fplanes, tree, slot_limit, trace):
    """Objects of every leaf a query may reach, each once, for the exact filter that follows.

    ``kind``, ``params``, ``fplanes``: the query in the shape encoding of :mod:`spatial.kernels`
    (a point is a box). Boxes also use the plane sides;
    the other shapes cull on the nodes' cull boxes. Returns the candidate slots, the number of
    nodes visited, and (if ``trace``) the rows visited and the rows culled by the shape.
    """
    planes, front, back, cull_lo, cull_hi = (tree.planes, tree.front, tree.back, tree.cull_lo,
                                             tree.cull_hi)
    leaf_start, leaf_count, items = tree.leaf_start, tree.leaf_count, tree.items
    qlo, qhi, scalar, inv = unpack_shape(kind, params)
    n_nodes = len(front)
    seen, out, visited_rows, culled_rows = candidate_buffers(slot_limit, n_nodes, trace)
    m = 0
    n_visited = 0
    n_culled = 0
    stack = np.empty(n_nodes + 1, dtype=np.int64)
    top = 0
    if n_nodes:
        stack[0] = 0
        top = 1
    while top:
        top -= 1
        node = stack[top]
        keep = shape_may_meet_row(kind, qlo, qhi, scalar, inv, fplanes, cull_lo, cull_hi, node,
                                  CULL_SLACK)
        _, n_culled = record_visit(trace, keep, node, visited_rows, n_visited, culled_rows, n_culled)
        if not keep:
            continue
        n_visited += 1
        if front[node] < 0:
            out, m = push_unseen(items, leaf_start[node], leaf_count[node], seen, out, m)
            continue
        go_front = True
        go_back = True
        if kind == BOX:
            dmin, dmax = box_side_range(planes[node], qlo, qhi)
            go_front = dmax >= 0.0
            go_back = dmin <= 0.0
        if go_back:
            stack[top] = back[node]
            top += 1
        if go_front:
            stack[top] = front[node]
            top += 1
    return out[:m].copy(), n_visited, visited_rows[:n_visited].copy(), culled_rows[:n_culled].copy()


@numba.njit(cache=True, nogil=True)
def query_boxes(qlo, qhi, tree, slot_limit):
    """Many box queries: CSR slots of the overlapping objects, visits and tests per query."""
    planes, front, back, cull_lo, cull_hi = (tree.planes, tree.front, tree.back, tree.cull_lo,
                                             tree.cull_hi)
    leaf_start, leaf_count, items, lo, hi = (tree.leaf_start, tree.leaf_count, tree.items,
                                             tree.obj_lo, tree.obj_hi)
    q = qlo.shape[0]
    n_nodes = len(front)
    stamp = np.full(slot_limit, -1, dtype=np.int64)
    offsets = np.zeros(q + 1, dtype=np.int64)
    visited = np.zeros(q, dtype=np.int64)
    tested = np.zeros(q, dtype=np.int64)
    out = np.empty(64, dtype=np.int64)
    m = 0
    stack = np.empty(n_nodes + 1, dtype=np.int64)
    for k in range(q):
        top = 0
        if n_nodes:
            stack[0] = 0
            top = 1
        while top:
            top -= 1
            node = stack[top]
            if not overlap_row(cull_lo, cull_hi, node, qlo[k], qhi[k]):
                continue
            visited[k] += 1
            if front[node] < 0:
                for i in range(leaf_start[node], leaf_start[node] + leaf_count[node]):
                    o = items[i]
                    if stamp[o] == k:
                        continue
                    stamp[o] = k
                    tested[k] += 1
                    if overlap_row(lo, hi, o, qlo[k], qhi[k]):
                        if m == len(out):
                            out = grow(out, 2 * m)
                        out[m] = o
                        m += 1
                continue
            top = _push_sides_reached(planes[node], qlo[k], qhi[k], front[node], back[node], stack,
                                      top)
        offsets[k + 1] = m
    return out[:m].copy(), offsets, visited, tested


@numba.njit(cache=True, nogil=True)
def query_rays(origins, directions, max_t, tree):
    """Closest hit per ray (ties to the smaller id), front to back with early exit.

    At an inner node the child on the origin's side of the plane is visited first; a node whose
    cull box the ray enters beyond the best hit so far is skipped, since nothing in it can be
    nearer (every object lies inside its cull box, and the slab entry is monotone).
    """
    planes, front, back, cull_lo, cull_hi = (tree.planes, tree.front, tree.back, tree.cull_lo,
                                             tree.cull_hi)
    leaf_start, leaf_count, items, lo, hi, ids = (tree.leaf_start, tree.leaf_count, tree.items,
                                                  tree.obj_lo, tree.obj_hi, tree.obj_ids)
    q = origins.shape[0]
    n_nodes = len(front)
    best_slot = np.full(q, -1, dtype=np.int64)
    best_t = np.full(q, np.inf)
    visited = np.zeros(q, dtype=np.int64)
    tested = np.zeros(q, dtype=np.int64)
    stack = np.empty(n_nodes + 1, dtype=np.int64)
    stack_t = np.empty(n_nodes + 1)
    for k in range(q):
        origin = origins[k]
        direction = directions[k]
        inv = ray_setup(direction)
        top = 0
        if n_nodes:
            t0 = ray_slab_row(origin, direction, inv, cull_lo, cull_hi, 0)
            if t0 < np.inf and t0 <= max_t:
                stack[0] = 0
                stack_t[0] = t0
                top = 1
        bt = np.inf
        bs = -1
        while top:
            top -= 1
            node = stack[top]
            if stack_t[top] > bt:
                continue
            visited[k] += 1
            if front[node] < 0:
                for i in range(leaf_start[node], leaf_start[node] + leaf_count[node]):
                    o = items[i]
                    tested[k] += 1
                    t = ray_slab_row(origin, direction, inv, lo, hi, o)
                    if t == np.inf or t > max_t:
                        continue
                    if t < bt or (t == bt and bs >= 0 and ids[o] < ids[bs]):
                        bt = t
                        bs = o
                continue
            near = front[node]
            far = back[node]
            if point_side(planes[node], origin) < 0.0:
                near, far = far, near
            for child in (far, near):  # near pushed last, popped first
                t = ray_slab_row(origin, direction, inv, cull_lo, cull_hi, child)
                if t < np.inf and t <= max_t and t <= bt:
                    stack[top] = child
                    stack_t[top] = t
                    top += 1
        best_slot[k] = bs
        best_t[k] = bt
    return best_slot, best_t, visited, tested


# --------------------------------------------------------------------------- pairs
@numba.njit(cache=True, nogil=True)
def leaf_pairs(tree, active, only_active):
    """Overlapping pairs of every leaf, each reported once, and the tests made per node.

    A pair met in several leaves is reported only in the leaf holding the lower corner of the
    two boxes' intersection (:func:`holds_point`), which holds both objects. Objects referenced
    once need no such check: their pairs can only be met in one leaf.
    """
    planes, front, parent, refcount = tree.planes, tree.front, tree.parent, tree.refcount
    leaf_start, leaf_count, items, lo, hi = (tree.leaf_start, tree.leaf_count, tree.items,
                                             tree.obj_lo, tree.obj_hi)
    n_nodes = len(front)
    node_tests = np.zeros(n_nodes, dtype=np.int64)
    out = np.empty((64, 2), dtype=np.int64)
    m = 0
    p = np.empty(3)
    for node in range(n_nodes):
        if front[node] >= 0:
            continue
        m0 = m
        out, m, tests = list_pairs(items, leaf_start[node], leaf_count[node], lo, hi, active,
                                   only_active, out, m)
        node_tests[node] = tests
        kept = m0
        for r in range(m0, m):
            a = out[r, 0]
            b = out[r, 1]
            if refcount[a] > 1 and refcount[b] > 1:
                for ax in range(3):
                    p[ax] = max(lo[a, ax], lo[b, ax])
                if not holds_point(node, p, planes, front, parent):
                    continue
            out[kept, 0] = a
            out[kept, 1] = b
            kept += 1
        m = kept
    return out[:m].copy(), node_tests


# --------------------------------------------------------------------------- checks
@numba.njit(cache=True, nogil=True)
def check_tree(tree, alive_slots, slot_limit):
    """Return an error code and the offending row/slot (0 when every invariant holds).

    Codes: 1 child's parent link wrong, 2 region box not nested in the parent's, 3 an object
    outside its leaf's cull box or cull box not nested, 4 an object on the wrong side of an
    ancestor plane, 5 an object missing from a leaf its box reaches, 6 a dead slot referenced,
    7 subtree count wrong, 8 an object referenced twice in one leaf.
    """
    planes, front, back, parent = tree.planes, tree.front, tree.back, tree.parent
    region_lo, region_hi, cull_lo, cull_hi = (tree.region_lo, tree.region_hi, tree.cull_lo,
                                              tree.cull_hi)
    leaf_start, leaf_count, items, subtree = (tree.leaf_start, tree.leaf_count, tree.items,
                                              tree.subtree)
    lo, hi = tree.obj_lo, tree.obj_hi
    n_nodes = len(front)
    alive = np.zeros(slot_limit, dtype=np.bool_)
    for s in alive_slots:
        alive[s] = True
    for node in range(n_nodes):
        if front[node] >= 0:
            for child in (front[node], back[node]):
                if parent[child] != node or child <= node:
                    return 1, child
                for a in range(3):
                    if region_lo[child, a] < region_lo[node, a] or region_hi[child, a] > region_hi[node, a]:
                        return 2, child
                    if cull_lo[child, a] < cull_lo[node, a] or cull_hi[child, a] > cull_hi[node, a]:
                        return 3, child
            if subtree[node] != subtree[front[node]] + subtree[back[node]]:
                return 7, node
        elif subtree[node] != leaf_count[node]:
            return 7, node
    # every reference: alive, once per leaf, inside the cull box, on the right side of each plane
    seen = np.full(slot_limit, -1, dtype=np.int64)
    for node in range(n_nodes):
        if front[node] >= 0:
            continue
        for i in range(leaf_start[node], leaf_start[node] + leaf_count[node]):
            o = items[i]
            if o < 0 or o >= slot_limit or not alive[o]:
                return 6, node
            if seen[o] == node:
                return 8, node
            seen[o] = node
            if not overlap_row(lo, hi, o, lo[o], hi[o]) or not (
                    cull_lo[node, 0] <= lo[o, 0] and hi[o, 0] <= cull_hi[node, 0]
                    and cull_lo[node, 1] <= lo[o, 1] and hi[o, 1] <= cull_hi[node, 1]
                    and cull_lo[node, 2] <= lo[o, 2] and hi[o, 2] <= cull_hi[node, 2]):
                return 3, node
            child = node
            up = parent[node]
            while up >= 0:
                dmin, dmax = box_side_range(planes[up], lo[o], hi[o])
                if child == front[up] and dmax < 0.0:
                    return 4, o
                if child == back[up] and dmin > 0.0:
                    return 4, o
                child = up
                up = parent[up]
    # every object in every leaf its box reaches through the planes
    stack = np.empty(n_nodes + 1, dtype=np.int64)
    for o in alive_slots:
        if n_nodes == 0:
            return 5, o
        stack[0] = 0
        top = 1
        while top:
            top -= 1
            node = stack[top]
            if front[node] < 0:
                found = False
                for i in range(leaf_start[node], leaf_start[node] + leaf_count[node]):
                    if items[i] == o:
                        found = True
                        break
                if not found:
                    return 5, o
                continue
            top = _push_sides_reached(planes[node], lo[o], hi[o], front[node], back[node], stack, top)
    return 0, 0
