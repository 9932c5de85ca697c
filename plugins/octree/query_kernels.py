"""Compiled read-only traversals of the octree: queries, batch queries and pair finding.

Every traversal uses an explicit stack and prunes a node when the query misses its loose
bounds. The node tests use the very same predicates as :mod:`spatial.geometry` (closed boxes,
the slab ray test, the positive-vertex frustum test); floating-point rounding is monotone, so a
node that encloses an object is never rejected when the object itself would pass, and ray
entry distances are bit-identical to the reference's.

Queries read each node's objects from the packed copy of :mod:`.packed_kernels` (contiguous,
grouped and sorted): box and sphere queries scan only the sorted range that can reach them,
rays and frusta scan the node's entries in memory order.

The root may be told to be always visited (``root_always``): under the ``keep_in_root`` policy
it holds objects that stick out of its cell.
"""
from __future__ import annotations

import numba
import numpy as np

from .layout import CHILD, HEAD, LOOSE_HI, LOOSE_LO, NCHILD, NEXT
from .packed_kernels import first_reaching, group_axis

STACK = 512  # > 7 * max depth (30) + 1: a depth-first stack never holds more


@numba.njit(cache=True)
def _grow(arr, needed):
    if needed <= arr.shape[0]:
        return arr
    size = max(needed, 2 * arr.shape[0])
    out = np.empty((size,) + arr.shape[1:], dtype=arr.dtype)
    out[: arr.shape[0]] = arr
    return out


@numba.njit(cache=True, inline="always")
def _node_meets_box(NF, node, qlo, qhi):
    for a in range(3):
        if NF[node, LOOSE_LO + a] > qhi[a] or qlo[a] > NF[node, LOOSE_HI + a]:
            return False
    return True


@numba.njit(cache=True, inline="always")
def _box_meets_box(lo, hi, s, qlo, qhi):
    for a in range(3):
        if lo[s, a] > qhi[a] or qlo[a] > hi[s, a]:
            return False
    return True


@numba.njit(cache=True, inline="always")
def _sphere_meets(blo0, blo1, blo2, bhi0, bhi1, bhi2, centre, radius):
    """``spatial.geometry.sphere_box`` for one box: clamp the centre, compare squared distance."""
    d0 = min(max(centre[0], blo0), bhi0) - centre[0]
    d1 = min(max(centre[1], blo1), bhi1) - centre[1]
    d2 = min(max(centre[2], blo2), bhi2) - centre[2]
    return d0 * d0 + d1 * d1 + d2 * d2 <= radius * radius


@numba.njit(cache=True, inline="always")
def _slab(origin, inv, parallel, box, row, col_lo, col_hi):
    """``spatial.geometry.ray_box`` for one box: ``(hit, entry t)`` with the same arithmetic."""
    t_enter = -np.inf
    t_exit = np.inf
    for a in range(3):
        blo = box[row, col_lo + a]
        bhi = box[row, col_hi + a]
        if parallel[a]:
            if not (blo <= origin[a] and origin[a] <= bhi):
                return False, np.inf
        else:
            t1 = (blo - origin[a]) * inv[a]
            t2 = (bhi - origin[a]) * inv[a]
            t_enter = max(t_enter, min(t1, t2))
            t_exit = min(t_exit, max(t1, t2))
    t_enter = max(t_enter, 0.0)
    if t_enter <= t_exit:
        return True, t_enter
    return False, np.inf


@numba.njit(cache=True)
def _ray_setup(direction):
    parallel = np.empty(3, dtype=np.bool_)
    inv = np.empty(3)
    for a in range(3):
        parallel[a] = direction[a] == 0.0
        inv[a] = 0.0 if parallel[a] else 1.0 / direction[a]
    return inv, parallel


@numba.njit(cache=True, inline="always")
def _frustum_keeps(planes, box, row, col_lo, col_hi):
    """``spatial.geometry.frustum_box``: reject only when the positive vertex is behind a plane."""
    for k in range(planes.shape[0]):
        s = 0.0
        for a in range(3):
            n = planes[k, a]
            s += (box[row, col_hi + a] if n >= 0 else box[row, col_lo + a]) * n
        if s + planes[k, 3] < 0:
            return False
    return True


@numba.njit(cache=True, inline="always")
def _frustum_box_rows(planes, lo, hi, s):
    for k in range(planes.shape[0]):
        acc = 0.0
        for a in range(3):
            n = planes[k, a]
            acc += (hi[s, a] if n >= 0 else lo[s, a]) * n
        if acc + planes[k, 3] < 0:
            return False
    return True


@numba.njit(cache=True)
def query_shape(NI, NF, packed, kind, qlo, qhi, centre, radius, planes, root_always, trace):
    """Objects meeting a box (``kind`` 0), sphere (1) or frustum (2).

    ``packed`` is the output of :func:`.packed_kernels.pack`; for a sphere, ``qlo``/``qhi`` is
    (a slightly padded) bounding box of it, used to narrow the scan of each node's objects.
    Returns ``(slots, nodes visited, objects tested, visited node ids, culled node ids)``.
    """
    out = np.empty(64, dtype=np.int64)
    m = 0
    visited_ids = np.empty(64 if trace else 0, dtype=np.int64)
    culled_ids = np.empty(64 if trace else 0, dtype=np.int64)
    nv = 0
    nc = 0
    tested = 0
    stack = np.empty(STACK, dtype=np.int64)
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        if kind == 0:
            meets = _node_meets_box(NF, node, qlo, qhi)
        elif kind == 1:
            meets = _sphere_meets(NF[node, LOOSE_LO], NF[node, LOOSE_LO + 1], NF[node, LOOSE_LO + 2],
                                  NF[node, LOOSE_HI], NF[node, LOOSE_HI + 1], NF[node, LOOSE_HI + 2],
                                  centre, radius)
        else:
            meets = _frustum_keeps(planes, NF, node, LOOSE_LO, LOOSE_HI)
        if not meets and not (node == 0 and root_always):
            if trace:
                if nc >= culled_ids.shape[0]:
                    culled_ids = _grow(culled_ids, nc + 1)
                culled_ids[nc] = node
                nc += 1
            continue
        if trace:
            if nv >= visited_ids.shape[0]:
                visited_ids = _grow(visited_ids, nv + 1)
            visited_ids[nv] = node
        nv += 1
        slots, boxes, group_start, reach = packed
        for g in range(3):
            g0 = group_start[node, g]
            g1 = group_start[node, g + 1]
            if g0 == g1:
                continue
            axis = group_axis(g)
            first = g0 if kind == 2 else first_reaching(boxes, g0, g1, axis, qlo[axis], reach[node, g])
            for e in range(first, g1):
                if kind != 2 and boxes[e, axis] > qhi[axis]:
                    break
                tested += 1
                if kind == 0:
                    hit = _packed_meets_box(boxes, e, qlo, qhi)
                elif kind == 1:
                    hit = _sphere_meets(boxes[e, 0], boxes[e, 1], boxes[e, 2], boxes[e, 3], boxes[e, 4],
                                        boxes[e, 5], centre, radius)
                else:
                    hit = _frustum_keeps(planes, boxes, e, 0, 3)
                if hit:
                    if m >= out.shape[0]:
                        out = _grow(out, m + 1)
                    out[m] = slots[e]
                    m += 1
        if NI[node, NCHILD]:
            for c in range(7, -1, -1):
                child = NI[node, CHILD + c]
                if child >= 0:
                    stack[top] = child
                    top += 1
    return out[:m], nv, tested, visited_ids[:nv if trace else 0], culled_ids[:nc]


@numba.njit(cache=True)
def query_ray_all(NI, NF, packed, origin, direction, max_t, root_always, trace):
    """Every object the ray meets within ``max_t``: ``(slots, t, visited, tested, visited ids)``."""
    inv, parallel = _ray_setup(direction)
    out = np.empty(64, dtype=np.int64)
    out_t = np.empty(64)
    m = 0
    visited_ids = np.empty(64 if trace else 0, dtype=np.int64)
    nv = 0
    tested = 0
    stack = np.empty(STACK, dtype=np.int64)
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        hit, t = _slab(origin, inv, parallel, NF, node, LOOSE_LO, LOOSE_HI)
        if not (hit and t <= max_t) and not (node == 0 and root_always):
            continue
        if trace:
            if nv >= visited_ids.shape[0]:
                visited_ids = _grow(visited_ids, nv + 1)
            visited_ids[nv] = node
        nv += 1
        slots, boxes, group_start, _ = packed
        for e in range(group_start[node, 0], group_start[node, 3]):
            tested += 1
            hit, t = _slab(origin, inv, parallel, boxes, e, 0, 3)
            if hit and t <= max_t:
                if m >= out.shape[0]:
                    out = _grow(out, m + 1)
                if m >= out_t.shape[0]:
                    out_t = _grow(out_t, m + 1)
                out[m] = slots[e]
                out_t[m] = t
                m += 1
        if NI[node, NCHILD]:
            for c in range(7, -1, -1):
                child = NI[node, CHILD + c]
                if child >= 0:
                    stack[top] = child
                    top += 1
    return out[:m], out_t[:m], nv, tested, visited_ids[:nv if trace else 0]


@numba.njit(cache=True)
def _one_box(NI, NF, packed, qlo, qhi, root_always, stack, out, m):
    """One box query writing hits into ``out`` from ``m`` up to its capacity.

    Returns ``(hits so far, nodes visited, objects tested)``; the caller grows ``out`` and
    repeats the query when the count exceeds the capacity (no growth inside the loop).
    """
    slots, boxes, group_start, reach = packed
    cap = out.shape[0]
    visited = 0
    tested = 0
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        if not _node_meets_box(NF, node, qlo, qhi) and not (node == 0 and root_always):
            continue
        visited += 1
        for g in range(3):
            g0 = group_start[node, g]
            g1 = group_start[node, g + 1]
            if g0 == g1:
                continue
            axis = group_axis(g)
            for e in range(first_reaching(boxes, g0, g1, axis, qlo[axis], reach[node, g]), g1):
                if boxes[e, axis] > qhi[axis]:
                    break
                tested += 1
                if _packed_meets_box(boxes, e, qlo, qhi):
                    if m < cap:
                        out[m] = slots[e]
                    m += 1
        if NI[node, NCHILD]:
            for c in range(8):
                child = NI[node, CHILD + c]
                if child >= 0:
                    stack[top] = child
                    top += 1
    return m, visited, tested


@numba.njit(cache=True, inline="always")
def _packed_meets_box(boxes, e, qlo, qhi):
    for a in range(3):
        if boxes[e, a] > qhi[a] or qlo[a] > boxes[e, 3 + a]:
            return False
    return True


@numba.njit(cache=True)
def query_boxes(NI, NF, packed, qlo, qhi, root_always):
    """Many box queries fused: CSR ``(slots, offsets, visited, tested)``."""
    q = qlo.shape[0]
    out = np.empty(max(64, 4 * q), dtype=np.int64)
    offsets = np.zeros(q + 1, dtype=np.int64)
    visited = np.zeros(q, dtype=np.int64)
    tested = np.zeros(q, dtype=np.int64)
    stack = np.empty(STACK, dtype=np.int64)
    m = 0
    for i in range(q):
        m_new, visited[i], tested[i] = _one_box(NI, NF, packed, qlo[i], qhi[i], root_always,
                                                stack, out, m)
        if m_new > out.shape[0]:
            out = _grow(out, 2 * m_new)
            m_new, visited[i], tested[i] = _one_box(NI, NF, packed, qlo[i], qhi[i], root_always,
                                                    stack, out, m)
        m = m_new
        offsets[i + 1] = m
    return out[:m], offsets, visited, tested


@numba.njit(cache=True)
def query_rays_closest(NI, NF, packed, ids, origins, directions, max_t, root_always):
    """Closest hit per ray (ties to the smaller id), children visited front to back.

    A node is skipped once its entry distance exceeds the best hit so far, so a ray stops
    descending as soon as nothing nearer can remain.
    """
    slots, boxes, group_start, _ = packed
    q = origins.shape[0]
    best_slot = np.full(q, -1, dtype=np.int64)
    best_t = np.full(q, np.inf)
    visited = np.zeros(q, dtype=np.int64)
    tested = np.zeros(q, dtype=np.int64)
    stack = np.empty(STACK, dtype=np.int64)
    stack_t = np.empty(STACK)
    child_ids = np.empty(8, dtype=np.int64)
    child_t = np.empty(8)
    for i in range(q):
        origin = origins[i]
        inv, parallel = _ray_setup(directions[i])
        limit = max_t
        best = -1
        best_id = -1
        top = 0
        hit, t = _slab(origin, inv, parallel, NF, 0, LOOSE_LO, LOOSE_HI)
        if root_always:
            hit, t = True, 0.0
        if hit and t <= limit:
            stack[0] = 0
            stack_t[0] = t
            top = 1
        while top > 0:
            top -= 1
            node = stack[top]
            if stack_t[top] > limit:
                continue
            visited[i] += 1
            for e in range(group_start[node, 0], group_start[node, 3]):
                tested[i] += 1
                hit, t = _slab(origin, inv, parallel, boxes, e, 0, 3)
                if hit and (t < limit or (t == limit and (best < 0 or ids[slots[e]] < best_id))):
                    limit = t
                    best = slots[e]
                    best_id = ids[best]
            if NI[node, NCHILD] == 0:
                continue
            k = 0
            for c in range(8):
                child = NI[node, CHILD + c]
                if child >= 0:
                    hit, t = _slab(origin, inv, parallel, NF, child, LOOSE_LO, LOOSE_HI)
                    if hit and t <= limit:
                        # insertion sort, farthest first, so the nearest child is popped first
                        j = k
                        while j > 0 and child_t[j - 1] < t:
                            child_ids[j] = child_ids[j - 1]
                            child_t[j] = child_t[j - 1]
                            j -= 1
                        child_ids[j] = child
                        child_t[j] = t
                        k += 1
            for j in range(k):
                stack[top] = child_ids[j]
                stack_t[top] = child_t[j]
                top += 1
        best_slot[i] = best
        best_t[i] = limit if best >= 0 else np.inf
    return best_slot, best_t, visited, tested
