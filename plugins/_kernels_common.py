"""Compiled kernels shared by the tree and grid backends.

The predicates here repeat, operation for operation, the reference formulas of
:mod:`spatial.geometry` (closed overlap, the slab ray test with its entry ``t``, the closest-point
sphere test and the positive-vertex frustum test), so a backend's answers and ray distances are
bit-identical to the brute-force oracle's.

Tree kernels read one flat layout that both the kd-tree and the BVH produce:

* ``node_lo/node_hi`` ``(cap, 3)``: bounds that enclose every object stored in the subtree,
* ``left/right``: child node ids (``left < 0`` marks a leaf),
* ``item_start/item_count``: the slots a node stores itself are
  ``items[item_start[n]: item_start[n] + item_count[n]]``,
* ``cell_lo/cell_hi``: for a tree that stores an object in every leaf it overlaps (the kd-tree),
  the half-open region ``cell_lo <= p < cell_hi`` a leaf owns. A box query then reports an object
  only in the leaf owning the *reference point* ``max(object lo, query lo)`` (and a pair only in
  the leaf owning ``max(lo_a, lo_b)``): that point lies in the object and in the query, so the
  leaf owning it holds the object, and each answer comes out exactly once without a mark array.

Every traversal uses an explicit, growable stack: no recursion.
"""
from __future__ import annotations

import numba
import numpy as np

INF = np.inf


# --------------------------------------------------------------------------- small helpers
@numba.njit(cache=True, nogil=True)
def grow(arr, needed):
    """``arr`` (C-contiguous, rows along the first axis, any number of axes) with room for
    ``needed`` rows: ``arr`` itself when it has them, else a copy at least twice as long whose
    extra rows are uninitialised.

    The copy is an element loop over the flattened arrays rather than a slice assignment:
    numba compiles slice assignment into general broadcasting code, which is several times
    slower to compile on a first start, for the same machine code.
    """
    if needed <= arr.shape[0]:
        return arr
    out = np.empty((max(needed, 2 * arr.shape[0]),) + arr.shape[1:], dtype=arr.dtype)
    src = arr.reshape(-1)
    dst = out.reshape(-1)
    for i in range(src.shape[0]):
        dst[i] = src[i]
    return out


@numba.njit(cache=True, inline="always")
def push(stack, sp, value):
    """Push ``value``; grow the stack when full. Returns ``(stack, new_sp)``."""
    if sp == len(stack):
        grown = np.empty(2 * len(stack), dtype=stack.dtype)
        grown[:sp] = stack[:sp]
        stack = grown
    stack[sp] = value
    return stack, sp + 1


@numba.njit(cache=True, inline="always")
def push_f(stack, sp, value):
    """:func:`push` for a float stack."""
    if sp == len(stack):
        grown = np.empty(2 * len(stack), dtype=stack.dtype)
        grown[:sp] = stack[:sp]
        stack = grown
    stack[sp] = value
    return stack, sp + 1


@numba.njit(cache=True, inline="always")
def push_pair(out, m, a, b):
    """Append the pair ``(a, b)`` to a growable ``(cap, 2)`` array."""
    if m == len(out):
        grown = np.empty((2 * len(out), 2), dtype=out.dtype)
        grown[:m] = out[:m]
        out = grown
    out[m, 0] = a
    out[m, 1] = b
    return out, m + 1


@numba.njit(cache=True, inline="always")
def overlap(alo, ahi, blo, bhi):
    """Closed box overlap of two 3-vectors pairs."""
    return (alo[0] <= bhi[0] and blo[0] <= ahi[0] and alo[1] <= bhi[1] and blo[1] <= ahi[1]
            and alo[2] <= bhi[2] and blo[2] <= ahi[2])


@numba.njit(cache=True, inline="always")
def overlap_row(lo, hi, row, qlo, qhi):
    """Closed overlap of box ``row`` of ``lo/hi`` with ``qlo/qhi``, read by index: no array
    views in the hot loops, which would cost a reference-count update each."""
    return (lo[row, 0] <= qhi[0] and qlo[0] <= hi[row, 0] and lo[row, 1] <= qhi[1]
            and qlo[1] <= hi[row, 1] and lo[row, 2] <= qhi[2] and qlo[2] <= hi[row, 2])


@numba.njit(cache=True, inline="always")
def ray_setup(direction):
    """Reciprocal direction with 0 on parallel axes, as :func:`spatial.geometry.ray_box` does."""
    inv = np.zeros(3)
    for k in range(3):
        if direction[k] != 0.0:
            inv[k] = 1.0 / direction[k]
    return inv


@numba.njit(cache=True, inline="always")
def ray_slab(origin, direction, inv, lo, hi):
    """Entry ``t`` of the ray into the closed box, or ``inf`` on a miss.

    Same operations as :func:`spatial.geometry.ray_box`, so ``t`` is bit-identical.
    """
    t_enter = -INF
    t_exit = INF
    for k in range(3):
        if direction[k] == 0.0:
            if not (lo[k] <= origin[k] and origin[k] <= hi[k]):
                return INF
        else:
            t1 = (lo[k] - origin[k]) * inv[k]
            t2 = (hi[k] - origin[k]) * inv[k]
            near = t1 if t1 < t2 else t2
            far = t2 if t1 < t2 else t1
            if near > t_enter:
                t_enter = near
            if far < t_exit:
                t_exit = far
    if t_enter < 0.0:
        t_enter = 0.0
    if t_enter <= t_exit:
        return t_enter
    return INF


@numba.njit(cache=True, inline="always")
def sphere_touches(center, radius, lo, hi):
    """Closed sphere/box test of :func:`spatial.geometry.sphere_box`."""
    d2 = 0.0
    for k in range(3):
        c = center[k]
        x = c
        if x < lo[k]:
            x = lo[k]
        if x > hi[k]:
            x = hi[k]
        d = x - c
        d2 += d * d
    return d2 <= radius * radius


@numba.njit(cache=True, inline="always")
def frustum_keeps(planes, lo, hi):
    """Positive-vertex test of :func:`spatial.geometry.frustum_box`."""
    for p in range(planes.shape[0]):
        nx, ny, nz, d = planes[p, 0], planes[p, 1], planes[p, 2], planes[p, 3]
        px = hi[0] if nx >= 0 else lo[0]
        py = hi[1] if ny >= 0 else lo[1]
        pz = hi[2] if nz >= 0 else lo[2]
        if px * nx + py * ny + pz * nz + d < 0:
            return False
    return True


@numba.njit(cache=True, inline="always")
def in_cell(p0, p1, p2, clo, chi):
    """Half-open cell ownership ``clo <= p < chi`` of a reference point."""
    return (clo[0] <= p0 and p0 < chi[0] and clo[1] <= p1 and p1 < chi[1]
            and clo[2] <= p2 and p2 < chi[2])


# --------------------------------------------------------------------------- tree queries
@numba.njit(cache=True)
def _box_traverse(root, node_lo, node_hi, left, right, item_start, item_count, items,
                  obj_lo, obj_hi, qlo, qhi, use_cells, cell_lo, cell_hi,
                  out, m, stack, rows, nrows, trace):
    visited = 0
    tested = 0
    if root < 0:
        return out, m, visited, tested, rows, nrows
    sp = 0
    stack, sp = push(stack, sp, root)
    while sp > 0:
        sp -= 1
        n = stack[sp]
        visited += 1
        if trace:
            rows, nrows = push(rows, nrows, n)
        if not overlap_row(node_lo, node_hi, n, qlo, qhi):
            continue
        start = item_start[n]
        for k in range(item_count[n]):
            s = items[start + k]
            tested += 1
            if overlap_row(obj_lo, obj_hi, s, qlo, qhi):
                if use_cells:
                    p0 = max(obj_lo[s, 0], qlo[0])
                    p1 = max(obj_lo[s, 1], qlo[1])
                    p2 = max(obj_lo[s, 2], qlo[2])
                    if not in_cell(p0, p1, p2, cell_lo[n], cell_hi[n]):
                        continue
                out, m = push(out, m, s)
        if left[n] >= 0:
            stack, sp = push(stack, sp, right[n])
            stack, sp = push(stack, sp, left[n])
    return out, m, visited, tested, rows, nrows


@numba.njit(cache=True)
def tree_query_box(root, node_lo, node_hi, left, right, item_start, item_count, items,
                   obj_lo, obj_hi, qlo, qhi, use_cells, cell_lo, cell_hi, trace):
    """Slots overlapping the closed box; ``(slots, visited, tested, node_ids)``."""
    out = np.empty(64, dtype=np.int64)
    stack = np.empty(64, dtype=np.int64)
    rows = np.empty(16, dtype=np.int64)
    out, m, visited, tested, rows, nrows = _box_traverse(
        root, node_lo, node_hi, left, right, item_start, item_count, items, obj_lo, obj_hi,
        qlo, qhi, use_cells, cell_lo, cell_hi, out, 0, stack, rows, 0, trace)
    return out[:m], visited, tested, rows[:nrows]


@numba.njit(cache=True)
def tree_query_boxes(root, node_lo, node_hi, left, right, item_start, item_count, items,
                     obj_lo, obj_hi, qlos, qhis, use_cells, cell_lo, cell_hi):
    """Many box queries; CSR ``(slots, offsets, visited, tested)``."""
    nq = qlos.shape[0]
    out = np.empty(max(64, 4 * nq), dtype=np.int64)
    offsets = np.zeros(nq + 1, dtype=np.int64)
    visited = np.zeros(nq, dtype=np.int64)
    tested = np.zeros(nq, dtype=np.int64)
    stack = np.empty(64, dtype=np.int64)
    rows = np.empty(1, dtype=np.int64)
    m = 0
    for q in range(nq):
        out, m, v, t, rows, _ = _box_traverse(
            root, node_lo, node_hi, left, right, item_start, item_count, items, obj_lo, obj_hi,
            qlos[q], qhis[q], use_cells, cell_lo, cell_hi, out, m, stack, rows, 0, False)
        visited[q] = v
        tested[q] = t
        offsets[q + 1] = m
    return out[:m], offsets, visited, tested


@numba.njit(cache=True)
def tree_query_sphere(root, node_lo, node_hi, left, right, item_start, item_count, items,
                      obj_lo, obj_hi, center, radius, trace):
    """Slots whose boxes touch the sphere (duplicates possible where a tree stores copies)."""
    out = np.empty(64, dtype=np.int64)
    stack = np.empty(64, dtype=np.int64)
    rows = np.empty(16, dtype=np.int64)
    m = 0
    nrows = 0
    visited = 0
    tested = 0
    sp = 0
    if root >= 0:
        stack, sp = push(stack, sp, root)
    while sp > 0:
        sp -= 1
        n = stack[sp]
        visited += 1
        if trace:
            rows, nrows = push(rows, nrows, n)
        if not sphere_touches(center, radius, node_lo[n], node_hi[n]):
            continue
        start = item_start[n]
        for k in range(item_count[n]):
            s = items[start + k]
            tested += 1
            if sphere_touches(center, radius, obj_lo[s], obj_hi[s]):
                out, m = push(out, m, s)
        if left[n] >= 0:
            stack, sp = push(stack, sp, right[n])
            stack, sp = push(stack, sp, left[n])
    return out[:m], visited, tested, rows[:nrows]


@numba.njit(cache=True)
def tree_query_frustum(root, node_lo, node_hi, left, right, item_start, item_count, items,
                       obj_lo, obj_hi, planes, trace):
    """Slots kept by the frustum test; also the node ids visited and culled."""
    out = np.empty(64, dtype=np.int64)
    stack = np.empty(64, dtype=np.int64)
    rows = np.empty(16, dtype=np.int64)
    culled = np.empty(16, dtype=np.int64)
    m = 0
    nrows = 0
    nculled = 0
    visited = 0
    tested = 0
    sp = 0
    if root >= 0:
        stack, sp = push(stack, sp, root)
    while sp > 0:
        sp -= 1
        n = stack[sp]
        visited += 1
        if trace:
            rows, nrows = push(rows, nrows, n)
        if not frustum_keeps(planes, node_lo[n], node_hi[n]):
            if trace:
                culled, nculled = push(culled, nculled, n)
            continue
        start = item_start[n]
        for k in range(item_count[n]):
            s = items[start + k]
            tested += 1
            if frustum_keeps(planes, obj_lo[s], obj_hi[s]):
                out, m = push(out, m, s)
        if left[n] >= 0:
            stack, sp = push(stack, sp, right[n])
            stack, sp = push(stack, sp, left[n])
    return out[:m], visited, tested, rows[:nrows], culled[:nculled]


@numba.njit(cache=True)
def tree_query_ray(root, node_lo, node_hi, left, right, item_start, item_count, items,
                   obj_lo, obj_hi, origin, direction, max_t, trace):
    """Every hit with ``t <= max_t``: ``(slots, t, visited, tested, node_ids)``."""
    inv = ray_setup(direction)
    out = np.empty(64, dtype=np.int64)
    ts = np.empty(64)
    stack = np.empty(64, dtype=np.int64)
    rows = np.empty(16, dtype=np.int64)
    m = 0
    mt = 0
    nrows = 0
    visited = 0
    tested = 0
    sp = 0
    if root >= 0:
        stack, sp = push(stack, sp, root)
    while sp > 0:
        sp -= 1
        n = stack[sp]
        visited += 1
        if trace:
            rows, nrows = push(rows, nrows, n)
        t_node = ray_slab(origin, direction, inv, node_lo[n], node_hi[n])
        if t_node == INF or t_node > max_t:
            continue
        start = item_start[n]
        for k in range(item_count[n]):
            s = items[start + k]
            tested += 1
            t = ray_slab(origin, direction, inv, obj_lo[s], obj_hi[s])
            if t < INF and t <= max_t:
                out, m = push(out, m, s)
                ts, mt = push_f(ts, mt, t)
        if left[n] >= 0:
            stack, sp = push(stack, sp, right[n])
            stack, sp = push(stack, sp, left[n])
    return out[:m], ts[:mt], visited, tested, rows[:nrows]


@numba.njit(cache=True)
def tree_query_rays_closest(root, node_lo, node_hi, left, right, item_start, item_count, items,
                            obj_lo, obj_hi, obj_ids, origins, directions, max_t):
    """Closest hit per ray, front to back with early exit; ties go to the smaller id.

    A node is entered only if its entry ``t`` does not exceed the best hit so far: the slab
    formula is monotonic in the box, so an object inside a node is never nearer than the node.
    Returns ``(slots, t, visited, tested)`` with slot ``-1`` and ``t = inf`` on a miss.
    """
    nq = origins.shape[0]
    best_slots = np.full(nq, -1, dtype=np.int64)
    best_ts = np.full(nq, INF)
    visited = np.zeros(nq, dtype=np.int64)
    tested = np.zeros(nq, dtype=np.int64)
    stack = np.empty(64, dtype=np.int64)
    tstack = np.empty(64)
    for q in range(nq):
        origin = origins[q]
        direction = directions[q]
        inv = ray_setup(direction)
        best_t = max_t
        best_s = -1
        best_id = -1
        v = 0
        tc = 0
        sp = 0
        tp = 0
        if root >= 0:
            t_root = ray_slab(origin, direction, inv, node_lo[root], node_hi[root])
            if t_root < INF and t_root <= best_t:
                stack, sp = push(stack, sp, root)
                tstack, tp = push_f(tstack, tp, t_root)
        while sp > 0:
            sp -= 1
            tp -= 1
            n = stack[sp]
            if tstack[tp] > best_t:
                continue
            v += 1
            start = item_start[n]
            for k in range(item_count[n]):
                s = items[start + k]
                tc += 1
                t = ray_slab(origin, direction, inv, obj_lo[s], obj_hi[s])
                if t < INF and (t < best_t or (t == best_t
                                                and (best_s < 0 or obj_ids[s] < best_id))):
                    best_t = t
                    best_s = s
                    best_id = obj_ids[s]
            if left[n] >= 0:
                a = left[n]
                b = right[n]
                ta = ray_slab(origin, direction, inv, node_lo[a], node_hi[a])
                tb = ray_slab(origin, direction, inv, node_lo[b], node_hi[b])
                if ta > tb:
                    a, b = b, a
                    ta, tb = tb, ta
                # push the far child first so the near one is explored first
                if tb < INF and tb <= best_t:
                    stack, sp = push(stack, sp, b)
                    tstack, tp = push_f(tstack, tp, tb)
                if ta < INF and ta <= best_t:
                    stack, sp = push(stack, sp, a)
                    tstack, tp = push_f(tstack, tp, ta)
        best_slots[q] = best_s
        best_ts[q] = best_t if best_s >= 0 else INF
        visited[q] = v
        tested[q] = tc
    return best_slots, best_ts, visited, tested


# --------------------------------------------------------------------------- bookkeeping
@numba.njit(cache=True)
def preorder(root, left, right):
    """Node ids in depth-first preorder (parents before children), with parent ids and depths."""
    order = np.empty(64, dtype=np.int64)
    parents = np.empty(64, dtype=np.int64)
    depths = np.empty(64, dtype=np.int64)
    m = 0
    stack = np.empty(64, dtype=np.int64)
    pstack = np.empty(64, dtype=np.int64)
    dstack = np.empty(64, dtype=np.int64)
    sp = 0
    if root >= 0:
        stack, sp = push(stack, sp, root)
        pstack, _ = push(pstack, 0, -1)
        dstack, _ = push(dstack, 0, 0)
    while sp > 0:
        sp -= 1
        n = stack[sp]
        p = pstack[sp]
        d = dstack[sp]
        order, _ = push(order, m, n)
        parents, _ = push(parents, m, p)
        depths, m = push(depths, m, d)
        if left[n] >= 0:
            row = m - 1
            for child in (right[n], left[n]):
                stack, sp1 = push(stack, sp, child)
                pstack, _ = push(pstack, sp, row)
                dstack, _ = push(dstack, sp, d + 1)
                sp = sp1
    return order[:m], parents[:m], depths[:m]


def slots_to_ids(object_ids, slots):
    """Map slots to ids, keeping ``-1`` (no hit) as ``-1``."""
    slots = np.asarray(slots, dtype=np.int64)
    out = np.full(len(slots), -1, dtype=np.int64)
    hit = slots >= 0
    out[hit] = object_ids[slots[hit]]
    return out
