"""Compiled read-only traversals of the octree: queries, batch queries and pair finding.

Every traversal uses an explicit stack over the node rows of the packed copy (breadth-first
rows, siblings consecutive; see :mod:`.packed_kernels`) and prunes a node when the query misses
its loose bounds. Visited and culled nodes are reported as those rows. The node tests use the
very same predicates as :mod:`spatial.geometry` (closed boxes,
the slab ray test, the positive-vertex frustum test); floating-point rounding is monotone, so a
node that encloses an object is never rejected when the object itself would pass, and ray
entry distances are bit-identical to the reference's.

Queries read each node's objects from the packed copy of :mod:`.packed_kernels` and descend
the node's own small tree of bounding boxes instead of scanning its whole list, so a node crowded
with straddlers costs about the logarithm of its list. Closest-hit rays keep octree nodes and
node-tree rows on one stack ordered by entry distance, so the nearest candidates are tested
first and everything beyond the best hit so far is skipped.

The hot batch paths (box queries, closest-hit rays) inline their predicates; the general shape
test of single queries is an ordinary call, which LLVM may still inline: forcing numba to inline
it into every caller made a first start compile these kernels for several seconds longer.

The root may be told to be always visited (``root_always``): under the ``keep_in_root`` policy
it holds objects that stick out of its cell.
"""
from __future__ import annotations

import numba
import numpy as np

import spatial.kernels as K

from .packed_kernels import END, FIRST, FIRST_KID, KIDS, LEAF_SIZE, LIST_END, LIST_FIRST, RIGHT, TREE_STACK

STACK = 512  # > 7 * max depth (30) + 1: a depth-first stack never holds more
#: A closest-hit ray's stack holds at most 8 pending items per octree level plus, for each
#: octree node whose list is being descended, one pending row per node-tree level.
RAY_STACK = 8 * 32 + 32 * TREE_STACK


@numba.njit(cache=True, inline="always")
def _slab(origin, inv, parallel, box, row, col_lo, col_hi):
    """``spatial.geometry.ray_box`` for one row of a packed box array: ``(hit, entry t)``.

    ``parallel`` repeats what ``inv == 0`` already says (see
    :func:`spatial.kernels.ray_slab_inv_row`); it stays in the signature for the ray march."""
    t = K.ray_slab_inv_row(origin, inv, box, box, row, col_lo, col_hi)
    return t < K.INF, t


@numba.njit(cache=True, nogil=True)
def _ray_setup(direction):
    parallel = np.empty(3, dtype=np.bool_)
    inv = np.empty(3)
    for a in range(3):
        parallel[a] = direction[a] == 0.0
        inv[a] = 0.0 if parallel[a] else 1.0 / direction[a]
    return inv, parallel


@numba.njit(cache=True, nogil=True)
def _meets(kind, a, b, scalar, inv, planes, box, row):
    """:func:`spatial.kernels.shape_meets_row` on row ``row`` of an ``(n, 6)`` box array."""
    return K.shape_meets_row(kind, a, b, scalar, inv, planes, box, box, row, 0, 3)


@numba.njit(cache=True, nogil=True)
def _scan_list(packed, row, kind, a, b, scalar, inv, planes, tree_stack, out, out_t, m):
    """Objects of the own list of the node at ``row`` meeting the shape, appended to ``out``
    (a ray's entry ``t`` to ``out_t``) from ``m``.

    Writes stop at ``out``'s capacity but counting goes on; returns ``(hits so far, tested)``
    so the caller can grow ``out`` and scan again.
    """
    slots, boxes, list_root, tree_box, tree_int, node_box, node_kids = packed
    cap = out.shape[0]
    tested = 0
    # a short list is scanned as it stands; a long one leaf range by leaf range of its tree
    e0 = node_kids[row, LIST_FIRST]
    e1 = node_kids[row, LIST_END]
    top = 0
    if e1 - e0 > LEAF_SIZE:
        tree_stack[0] = list_root[row]
        top = 1
        e1 = e0
    while True:
        for e in range(e0, e1):
            tested += 1
            t = _meets(kind, a, b, scalar, inv, planes, boxes, e)
            if t < K.INF:
                if m < cap:
                    out[m] = slots[e]
                    if kind == K.RAY:
                        out_t[m] = t
                m += 1
        e0 = e1 = 0
        while top > 0:
            top -= 1
            k = tree_stack[top]
            if _meets(kind, a, b, scalar, inv, planes, tree_box, k) == K.INF:
                continue
            right = tree_int[k, RIGHT]
            if right >= 0:
                tree_stack[top] = right
                tree_stack[top + 1] = k + 1
                top += 2
                continue
            e0, e1 = tree_int[k, FIRST], tree_int[k, END]
            break
        if e0 == e1 and top == 0:
            break
    return m, tested


@numba.njit(cache=True, nogil=True)
def query_shape(packed, kind, params, planes, root_always, trace):
    """Objects meeting a query in the shared shape encoding of :mod:`spatial.kernels`.

    ``packed`` is the output of :func:`.packed_kernels.pack`. Returns ``(slots, t, nodes
    visited, objects tested, visited rows, culled rows)``; ``t`` (entry distances) for rays only.
    """
    a, b, scalar, inv = K.unpack_shape(kind, params)
    out = np.empty(64, dtype=np.int64)
    out_t = np.empty(64 if kind == K.RAY else 0)
    m = np.int64(0)  # np.int64, not 0: a literal 0 makes numba compile the callee twice
    visited_ids = np.empty(64 if trace else 0, dtype=np.int64)
    culled_ids = np.empty(64 if trace else 0, dtype=np.int64)
    nv = 0
    nc = 0
    tested = 0
    stack = np.empty(STACK, dtype=np.int64)
    tree_stack = np.empty(TREE_STACK, dtype=np.int64)
    node_box = packed[5]
    node_kids = packed[6]
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        if (_meets(kind, a, b, scalar, inv, planes, node_box, node) == K.INF
                and not (node == 0 and root_always)):
            if trace:
                culled_ids, nc = K.push(culled_ids, nc, node)
            continue
        if trace:
            visited_ids, _ = K.push(visited_ids, nv, node)
        nv += 1
        m_new, t = _scan_list(packed, node, kind, a, b, scalar, inv, planes, tree_stack, out,
                              out_t, m)
        if m_new > out.shape[0]:
            out = K.grow(out, 2 * m_new)
            out_t = K.grow(out_t, 2 * m_new if kind == K.RAY else 0)
            m_new, t = _scan_list(packed, node, kind, a, b, scalar, inv, planes, tree_stack, out,
                                  out_t, m)
        m = m_new
        tested += t
        first = node_kids[node, FIRST_KID]
        for c in range(node_kids[node, KIDS] - 1, -1, -1):
            stack[top] = first + c
            top += 1
    return (out[:m], out_t[:m if kind == K.RAY else 0], nv, tested,
            visited_ids[:nv if trace else 0], culled_ids[:nc])


@numba.njit(cache=True, nogil=True)
def _one_box(packed, qlo, qhi, root_always, stack, tree_stack, out, m):
    """One box query writing hits into ``out`` from ``m`` up to its capacity.

    Returns ``(hits so far, nodes visited, objects tested)``; the caller grows ``out`` and
    repeats the query when the count exceeds the capacity (no growth inside the loop). The
    children of a visited node are tested before they are pushed (their rows are adjacent, so
    that reads one stretch of memory), and a node on the stack is known to meet the query.
    """
    slots, boxes, list_root, tree_box, tree_int, node_box, node_kids = packed
    cap = out.shape[0]
    visited = 0
    tested = 0
    top = 0
    if root_always or K.overlap_row(node_box, node_box, 0, qlo, qhi, 0, 3):
        stack[0] = 0
        top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        visited += 1
        # a short list is scanned as it stands; a long one leaf range by leaf range of its tree
        e0 = node_kids[node, LIST_FIRST]
        e1 = node_kids[node, LIST_END]
        tt = 0
        if e1 - e0 > LEAF_SIZE:
            tree_stack[0] = list_root[node]
            tt = 1
            e1 = e0
        while True:
            for e in range(e0, e1):
                tested += 1
                if K.overlap_row(boxes, boxes, e, qlo, qhi, 0, 3):
                    if m < cap:
                        out[m] = slots[e]
                    m += 1
            e0 = e1 = 0
            while tt > 0:
                tt -= 1
                k = tree_stack[tt]
                if not K.overlap_row(tree_box, tree_box, k, qlo, qhi, 0, 3):
                    continue
                right = tree_int[k, RIGHT]
                if right >= 0:
                    tree_stack[tt] = right
                    tree_stack[tt + 1] = k + 1
                    tt += 2
                    continue
                e0, e1 = tree_int[k, FIRST], tree_int[k, END]
                break
            if e0 == e1 and tt == 0:
                break
        kid = node_kids[node, FIRST_KID]
        for child in range(kid, kid + node_kids[node, KIDS]):
            if K.overlap_row(node_box, node_box, child, qlo, qhi, 0, 3):
                stack[top] = child
                top += 1
    return m, visited, tested


@numba.njit(cache=True, nogil=True)
def query_boxes(packed, qlo, qhi, root_always):
    """Many box queries fused: CSR ``(slots, offsets, visited, tested)``."""
    q = qlo.shape[0]
    out = np.empty(max(64, 4 * q), dtype=np.int64)
    offsets = np.zeros(q + 1, dtype=np.int64)
    visited = np.zeros(q, dtype=np.int64)
    tested = np.zeros(q, dtype=np.int64)
    stack = np.empty(STACK, dtype=np.int64)
    tree_stack = np.empty(TREE_STACK, dtype=np.int64)
    m = np.int64(0)  # np.int64, not 0: a literal 0 makes numba compile the callee twice
    for i in range(q):
        m_new, visited[i], tested[i] = _one_box(packed, qlo[i], qhi[i], root_always,
                                                stack, tree_stack, out, m)
        if m_new > out.shape[0]:
            out = K.grow(out, 2 * m_new)
            m_new, visited[i], tested[i] = _one_box(packed, qlo[i], qhi[i], root_always,
                                                    stack, tree_stack, out, m)
        m = m_new
        offsets[i + 1] = m
    return out[:m], offsets, visited, tested


@numba.njit(cache=True, inline="always")
def _axis_slab(o, inv, blo, bhi, t_enter, t_exit):
    """One axis of :func:`spatial.kernels.ray_slab_inv_row` on scalars, the same operations in
    the same order (so ``t`` stays bit-identical): the narrowed ``(t_enter, t_exit)``, or an
    empty interval when the ray runs parallel to the axis outside the slab."""
    if inv == 0.0:
        if not (blo <= o and o <= bhi):
            return K.INF, -K.INF
        return t_enter, t_exit
    t1 = (blo - o) * inv
    t2 = (bhi - o) * inv
    return max(t_enter, min(t1, t2)), min(t_exit, max(t1, t2))


@numba.njit(cache=True, inline="always")
def _entry(ox, oy, oz, ix, iy, iz, box, row):
    """Entry ``t`` of the ray into row ``row`` of a packed ``(n, 6)`` box array, ``inf`` on a
    miss; the ray as six scalars, so the hot loop keeps them in registers."""
    t_enter, t_exit = _axis_slab(ox, ix, box[row, 0], box[row, 3], -K.INF, K.INF)
    t_enter, t_exit = _axis_slab(oy, iy, box[row, 1], box[row, 4], t_enter, t_exit)
    t_enter, t_exit = _axis_slab(oz, iz, box[row, 2], box[row, 5], t_enter, t_exit)
    t_enter = max(t_enter, 0.0)
    return t_enter if t_enter <= t_exit else K.INF


@numba.njit(cache=True, nogil=True)
def query_rays_closest(packed, tight, ids, origins, directions, max_t, root_always):
    """Closest hit per ray (ties to the smaller id), nearest candidates first.

    One stack holds octree nodes (ids ``>= 0``) and rows of the nodes' own trees (``-1 - row``)
    with their entry distances; whatever enters beyond the best hit so far is skipped, so a ray
    stops as soon as nothing nearer can remain. Only octree nodes count as visited.

    Octree nodes are tested against ``tight``, the bounds of each subtree's content
    (:func:`.packed_kernels.tight_bounds`), not their loose cells: a ray crossing the empty part
    of a cell enters it later or not at all, and a subtree holding nothing (lo > hi) is skipped
    without a test.
    """
    slots, boxes, list_root, tree_box, tree_int, node_box, node_kids = packed
    q = origins.shape[0]
    best_slot = np.full(q, -1, dtype=np.int64)
    best_t = np.full(q, np.inf)
    visited = np.zeros(q, dtype=np.int64)
    tested = np.zeros(q, dtype=np.int64)
    stack = np.empty(RAY_STACK, dtype=np.int64)
    stack_t = np.empty(RAY_STACK)
    cand = np.empty(9, dtype=np.int64)
    cand_t = np.empty(9)
    for i in range(q):
        # the ray as scalars and the counters as locals: read and written in registers, not
        # through arrays, in the loops below (about a third of the time on sparse levels)
        ox, oy, oz = origins[i, 0], origins[i, 1], origins[i, 2]
        dx, dy, dz = directions[i, 0], directions[i, 1], directions[i, 2]
        ix = 0.0 if dx == 0.0 else 1.0 / dx
        iy = 0.0 if dy == 0.0 else 1.0 / dy
        iz = 0.0 if dz == 0.0 else 1.0 / dz
        nv = 0
        nt = 0
        limit = max_t
        best = -1
        best_id = -1
        top = 0
        t = _entry(ox, oy, oz, ix, iy, iz, tight, 0)
        if tight[0, 0] > tight[0, 3]:
            t = K.INF  # nothing in the tree
        if root_always:
            t = 0.0
        if t < K.INF and t <= limit:
            stack[0] = 0
            stack_t[0] = t
            top = 1
        while top > 0:
            top -= 1
            item = stack[top]
            if stack_t[top] > limit:
                continue
            k = 0
            if item >= 0:
                nv += 1
                first = node_kids[item, LIST_FIRST]
                end = node_kids[item, LIST_END]
                if end - first <= LEAF_SIZE:
                    for e in range(first, end):
                        nt += 1
                        t = _entry(ox, oy, oz, ix, iy, iz, boxes, e)
                        if t < K.INF and (t < limit or (t == limit and (best < 0 or ids[slots[e]] < best_id))):
                            limit = t
                            best = slots[e]
                            best_id = ids[best]
                elif list_root[item] >= 0:
                    root = list_root[item]
                    t = _entry(ox, oy, oz, ix, iy, iz, tree_box, root)
                    if t < K.INF and t <= limit:
                        k = K.push_sorted(cand, cand_t, k, -1 - root, t)
                first = node_kids[item, FIRST_KID]
                for child in range(first, first + node_kids[item, KIDS]):
                    if tight[child, 0] > tight[child, 3]:
                        continue  # an empty subtree (a lingering leaf)
                    t = _entry(ox, oy, oz, ix, iy, iz, tight, child)
                    if t < K.INF and t <= limit:
                        k = K.push_sorted(cand, cand_t, k, child, t)
            else:
                row = -1 - item
                right = tree_int[row, RIGHT]
                if right < 0:
                    for e in range(tree_int[row, FIRST], tree_int[row, END]):
                        nt += 1
                        t = _entry(ox, oy, oz, ix, iy, iz, boxes, e)
                        if t < K.INF and (t < limit or (t == limit and (best < 0 or ids[slots[e]] < best_id))):
                            limit = t
                            best = slots[e]
                            best_id = ids[best]
                    continue
                for child in (row + 1, right):
                    t = _entry(ox, oy, oz, ix, iy, iz, tree_box, child)
                    if t < K.INF and t <= limit:
                        k = K.push_sorted(cand, cand_t, k, -1 - child, t)
            for j in range(k):
                stack[top] = cand[j]
                stack_t[top] = cand_t[j]
                top += 1
        visited[i] = nv
        tested[i] = nt
        best_slot[i] = best
        best_t[i] = limit if best >= 0 else np.inf
    return best_slot, best_t, visited, tested
