"""Compiled kernels of the grid backend: cell arithmetic, the cell tables, queries, pairs
and the invariant check (see :mod:`plugins.grid.index` for the layout)."""
from __future__ import annotations

import math
from typing import NamedTuple

import numba
import numpy as np

import spatial.kernels as K

#: Hash-mode cell coordinates are clamped to +-HASH_HALF so three fit in one 63-bit key.
HASH_HALF = 1 << 20
#: key of an unused hash-table entry
EMPTY_KEY = -1


class GridArrays(NamedTuple):
    """Everything the query and pair kernels read, passed as one argument (numba types a
    named tuple of arrays and scalars as one heterogeneous tuple: no boxing, no extra cost).

    ``origin``/``cell``/``inv`` place the cells (``inv = 1 / cell``); ``clamp_lo/clamp_hi``
    bound the cell coordinates; ``dims`` are the dense grid's cells per axis and ``hashed``
    says whether cells are found through ``dense`` (a dense index of ``dims``) or the open
    hash table ``tkeys/tvals``. Occupied cell ``c`` has coordinates ``coords[c]``, objects
    ``items[start[c]: start[c + 1]]`` and the union box ``cell_lo[c], cell_hi[c]`` of them;
    ``world_lo/world_hi`` bound every object; ``obj_lo/obj_hi/obj_ids`` are the object table.
    """

    origin: np.ndarray
    cell: float
    inv: float
    clamp_lo: np.ndarray
    clamp_hi: np.ndarray
    dims: np.ndarray
    hashed: bool
    dense: np.ndarray
    tkeys: np.ndarray
    tvals: np.ndarray
    coords: np.ndarray
    start: np.ndarray
    items: np.ndarray
    cell_lo: np.ndarray
    cell_hi: np.ndarray
    world_lo: np.ndarray
    world_hi: np.ndarray
    obj_lo: np.ndarray
    obj_hi: np.ndarray
    obj_ids: np.ndarray


# --------------------------------------------------------------------------- cell arithmetic
@numba.njit(cache=True, inline="always")
def _coord(x, origin, inv, lo_clamp, hi_clamp):
    # clamp before converting so huge coordinates cannot overflow the integer
    v = (x - origin) * inv
    if v < lo_clamp:
        return np.int64(lo_clamp)
    if v >= hi_clamp:
        return np.int64(hi_clamp)
    return np.int64(np.floor(v))


@numba.njit(cache=True, inline="always")
def _key(cx, cy, cz, dims, hashed):
    if hashed:
        return ((cx + HASH_HALF) << 42) | ((cy + HASH_HALF) << 21) | (cz + HASH_HALF)
    return (cx * dims[1] + cy) * dims[2] + cz


@numba.njit(cache=True, inline="always")
def _slot_of(key, mask):
    h = np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)
    h ^= h >> np.uint64(29)
    return np.int64(h & np.uint64(mask))


@numba.njit(cache=True, inline="always")
def _find(key, hashed, dense, tkeys, tvals):
    if not hashed:
        return np.int64(dense[key])
    mask = len(tkeys) - 1
    i = _slot_of(key, mask)
    while tkeys[i] != EMPTY_KEY:
        if tkeys[i] == key:
            return tvals[i]
        i = (i + 1) & mask
    return np.int64(-1)


@numba.njit(cache=True, nogil=True)
def _table_put(tkeys, tvals, key, value):
    mask = len(tkeys) - 1
    i = _slot_of(key, mask)
    while tkeys[i] != EMPTY_KEY and tkeys[i] != key:
        i = (i + 1) & mask
    tkeys[i] = key
    tvals[i] = value


@numba.njit(cache=True, nogil=True)
def cell_ranges(slots, lo, hi, origin, inv, clamp_lo, clamp_hi):
    """Per slot the inclusive cell range ``(x0, y0, z0, x1, y1, z1)`` and the total references
    (a float: an absurd layout may exceed the integer range, and the caller only compares it)."""
    out = np.empty((len(slots), 6), dtype=np.int64)
    total = 0.0
    for i in range(len(slots)):
        s = slots[i]
        cells = 1.0
        for a in range(3):
            out[i, a] = _coord(lo[s, a], origin[a], inv, clamp_lo[a], clamp_hi[a])
            out[i, 3 + a] = _coord(hi[s, a], origin[a], inv, clamp_lo[a], clamp_hi[a])
            cells *= out[i, 3 + a] - out[i, a] + 1
        total += cells
    return out, total


@numba.njit(cache=True, nogil=True)
def cell_bounds(start, items, lo, hi):
    """Union box of the objects of every cell."""
    n_cells = len(start) - 1
    cell_lo = np.full((n_cells, 3), np.inf)
    cell_hi = np.full((n_cells, 3), -np.inf)
    for c in range(n_cells):
        for j in range(start[c], start[c + 1]):
            s = items[j]
            for a in range(3):
                cell_lo[c, a] = min(cell_lo[c, a], lo[s, a])
                cell_hi[c, a] = max(cell_hi[c, a], hi[s, a])
    return cell_lo, cell_hi


def build_cells(slots, ranges, total, lo, hi, dims, hashed, n_dense):
    """Cell lists (CSR) of every object over the cells of its range.

    Returns ``dense, tkeys, tvals, cell_coord, cell_start, cell_items, cell_lo, cell_hi``:
    ``cell_lo/hi`` are the union of the objects of each cell (used to cull cells exactly).
    """
    return extend_cells(empty_cells(hashed, n_dense), slots, ranges, total, lo, hi, dims, hashed)


def empty_cells(hashed: bool, n_dense: int) -> tuple:
    """The cell tables of no object (the base :func:`extend_cells` adds to)."""
    return (np.full(n_dense if not hashed else 0, -1, dtype=np.int32),
            np.full(0, EMPTY_KEY, dtype=np.int64), np.full(0, -1, dtype=np.int64),
            np.empty((0, 3), dtype=np.int64), np.zeros(1, dtype=np.int64),
            np.empty(0, dtype=np.int64), np.empty((0, 3)), np.empty((0, 3)))


@numba.njit(cache=True, nogil=True)
def _sized_table(tkeys, tvals, size):
    """The hash table ``tkeys, tvals`` copied into a table of ``size`` buckets."""
    keys = np.full(size, EMPTY_KEY, dtype=np.int64)
    vals = np.full(size, -1, dtype=np.int64)
    for j in range(len(tkeys)):
        if tkeys[j] != EMPTY_KEY:
            _table_put(keys, vals, tkeys[j], tvals[j])
    return keys, vals


@numba.njit(cache=True, nogil=True)
def extend_cells(base, slots, ranges, total, lo, hi, dims, hashed):
    """The cell tables ``base`` (what :func:`build_cells` returns, left untouched) with the
    objects ``slots`` added over the cells of their ``ranges`` (``total`` references).

    A grid whose static objects stay put keeps their tables as the base and adds only the
    moving objects each frame: the static references are copied cell by cell, never hashed
    again. ``base``'s cells keep their numbers; new cells follow them. Returns what
    :func:`build_cells` returns.
    """
    dense0, tkeys0, tvals0, coords0, start0, items0, lo0, hi0 = base
    n_base = len(start0) - 1
    dense = dense0.copy()
    size = 64
    while size < 2 * (n_base + len(slots)):
        size *= 2
    if hashed and size > len(tkeys0):
        tkeys, tvals = _sized_table(tkeys0, tvals0, size)
    else:
        tkeys = tkeys0.copy()
        tvals = tvals0.copy()
    coords = np.empty((n_base + 64, 3), dtype=np.int64)
    coords[:n_base] = coords0[:n_base]
    ref_cell = np.empty(total, dtype=np.int64)
    ref_slot = np.empty(total, dtype=np.int64)
    n_cells = np.int64(n_base)  # typed: a literal would compile _table_put twice
    r = 0
    for i in range(len(slots)):
        s = slots[i]
        for cx in range(ranges[i, 0], ranges[i, 3] + 1):
            for cy in range(ranges[i, 1], ranges[i, 4] + 1):
                for cz in range(ranges[i, 2], ranges[i, 5] + 1):
                    key = _key(cx, cy, cz, dims, hashed)
                    idx = _find(key, hashed, dense, tkeys, tvals)
                    if idx < 0:
                        idx = n_cells
                        n_cells += 1
                        if hashed:
                            if 2 * n_cells > len(tkeys):
                                tkeys, tvals = _sized_table(tkeys, tvals, 2 * len(tkeys))
                            _table_put(tkeys, tvals, key, idx)
                        else:
                            dense[key] = idx
                        if idx == coords.shape[0]:
                            grown = np.empty((2 * coords.shape[0], 3), dtype=np.int64)
                            grown[:idx] = coords[:idx]
                            coords = grown
                        coords[idx, 0] = cx
                        coords[idx, 1] = cy
                        coords[idx, 2] = cz
                    ref_cell[r] = idx
                    ref_slot[r] = s
                    r += 1
    start = np.zeros(n_cells + 1, dtype=np.int64)
    for c in range(n_base):
        start[c + 1] = start0[c + 1] - start0[c]
    for j in range(total):
        start[ref_cell[j] + 1] += 1
    for c in range(n_cells):
        start[c + 1] += start[c]
    fill = start[:-1].copy()
    items = np.empty(start[n_cells], dtype=np.int64)
    cell_lo = np.full((n_cells, 3), np.inf)
    cell_hi = np.full((n_cells, 3), -np.inf)
    for c in range(n_base):  # the base's references first, in their order
        for j in range(start0[c], start0[c + 1]):
            items[fill[c]] = items0[j]
            fill[c] += 1
        for a in range(3):
            cell_lo[c, a] = lo0[c, a]
            cell_hi[c, a] = hi0[c, a]
    for j in range(total):
        c = ref_cell[j]
        s = ref_slot[j]
        items[fill[c]] = s
        fill[c] += 1
        for a in range(3):
            cell_lo[c, a] = min(cell_lo[c, a], lo[s, a])
            cell_hi[c, a] = max(cell_hi[c, a], hi[s, a])
    return dense, tkeys, tvals, coords[:n_cells].copy(), start, items, cell_lo, cell_hi


# --------------------------------------------------------------------------- queries
@numba.njit(cache=True, nogil=True)
def _cells_in(rlo, rhi, dims, hashed, dense, tkeys, tvals, coords):
    """Occupied cells whose coordinates lie in the inclusive range ``rlo..rhi``.

    Enumerates the range when it is smaller than the number of occupied cells, else scans the
    occupied cells, so a huge query on a fine hash grid stays bounded. Takes the few arrays it
    reads rather than the whole :class:`GridArrays`: a call pays a reference-count update for
    every array it is passed, and the ray march calls this once per step.
    """
    n_cells = coords.shape[0]
    span = 1.0
    for a in range(3):
        span *= rhi[a] - rlo[a] + 1
    out = np.empty(16, dtype=np.int64)
    m = 0
    if span <= n_cells:
        for cx in range(rlo[0], rhi[0] + 1):
            for cy in range(rlo[1], rhi[1] + 1):
                for cz in range(rlo[2], rhi[2] + 1):
                    idx = _find(_key(cx, cy, cz, dims, hashed), hashed, dense, tkeys, tvals)
                    if idx >= 0:
                        out, m = K.push(out, m, idx)
    else:
        for c in range(n_cells):
            if (rlo[0] <= coords[c, 0] <= rhi[0] and rlo[1] <= coords[c, 1] <= rhi[1]
                    and rlo[2] <= coords[c, 2] <= rhi[2]):
                out, m = K.push(out, m, c)
    return out[:m]


@numba.njit(cache=True, nogil=True)
def _range_of(qlo, qhi, origin, inv, clamp_lo, clamp_hi):
    rlo = np.empty(3, dtype=np.int64)
    rhi = np.empty(3, dtype=np.int64)
    for a in range(3):
        rlo[a] = _coord(qlo[a], origin[a], inv, clamp_lo[a], clamp_hi[a])
        rhi[a] = _coord(qhi[a], origin[a], inv, clamp_lo[a], clamp_hi[a])
    return rlo, rhi


@numba.njit(cache=True, inline="always")
def _box_cells(qlo, qhi, g, out, m, rows, nrows, trace):
    """Append the objects meeting box ``qlo, qhi`` to ``out``, each once: in the cell owning
    the reference point ``max(object lo, query lo)``. Inlined into the single and the batched
    box query, like :func:`_ray_march`."""
    # fields read once into locals: each read of a field of ``g`` costs a reference count
    # update, which in the loops below made queries a third slower
    lo, hi, coords, start, items = g.obj_lo, g.obj_hi, g.coords, g.start, g.items
    origin, inv, clamp_lo, clamp_hi = g.origin, g.inv, g.clamp_lo, g.clamp_hi
    cell_lo, cell_hi = g.cell_lo, g.cell_hi
    rlo, rhi = _range_of(qlo, qhi, origin, inv, clamp_lo, clamp_hi)
    cells = _cells_in(rlo, rhi, g.dims, g.hashed, g.dense, g.tkeys, g.tvals, coords)
    tested = 0
    for c in cells:
        if trace:
            rows, nrows = K.push(rows, nrows, c)
        if not K.overlap_row(cell_lo, cell_hi, c, qlo, qhi):
            continue
        for j in range(start[c], start[c + 1]):
            s = items[j]
            tested += 1
            if K.overlap_row(lo, hi, s, qlo, qhi):
                owner = True
                for a in range(3):
                    p = max(lo[s, a], qlo[a])
                    if _coord(p, origin[a], inv, clamp_lo[a], clamp_hi[a]) != coords[c, a]:
                        owner = False
                if owner:
                    out, m = K.push(out, m, s)
    return out, m, len(cells), tested, rows, nrows


@numba.njit(cache=True, nogil=True)
def grid_query_box(qlo, qhi, g, trace):
    """Objects of grid ``g`` meeting the box; ``(slots, visited, tested, cells visited)``."""
    out = np.empty(64, dtype=np.int64)
    rows = np.empty(16, dtype=np.int64)
    zero = np.int64(0)  # typed: literal arguments would compile _box_cells once more each
    out, m, visited, tested, rows, nrows = _box_cells(qlo, qhi, g, out, zero, rows, zero, trace)
    return out[:m], visited, tested, rows[:nrows]


@numba.njit(cache=True, nogil=True)
def grid_query_boxes(qlos, qhis, g):
    """Many box queries on grid ``g``; CSR ``(slots, offsets, visited, tested)``."""
    nq = qlos.shape[0]
    out = np.empty(max(64, 4 * nq), dtype=np.int64)
    offsets, visited, tested = K.batch_counters(nq)
    rows = np.empty(1, dtype=np.int64)
    # typed counters (a literal 0 would compile another signature); the literal False keeps
    # a copy without the trace, 15 % faster than testing a runtime flag per cell
    m = np.int64(0)
    zero = np.int64(0)
    for q in range(nq):
        out, m, v, t, rows, _ = _box_cells(qlos[q], qhis[q], g, out, m, rows, zero, False)
        K.close_query(q, m, v, t, offsets, visited, tested)
    return out[:m], offsets, visited, tested


@numba.njit(cache=True, nogil=True)
def grid_query_sphere(center, radius, g, trace):
    """Candidates (with duplicates) touching the sphere; the cell range is padded a hair so a
    sphere that touches a box only after rounding still reaches its cells."""
    pad = 1e-9 * (abs(center[0]) + abs(center[1]) + abs(center[2]) + radius) + 1e-300
    qlo = center - radius - pad
    qhi = center + radius + pad
    start, items, cell_lo, cell_hi, lo, hi = (g.start, g.items, g.cell_lo, g.cell_hi, g.obj_lo,
                                              g.obj_hi)
    rlo, rhi = _range_of(qlo, qhi, g.origin, g.inv, g.clamp_lo, g.clamp_hi)
    cells = _cells_in(rlo, rhi, g.dims, g.hashed, g.dense, g.tkeys, g.tvals, g.coords)
    out = np.empty(64, dtype=np.int64)
    rows = np.empty(16, dtype=np.int64)
    m = 0
    nrows = 0
    tested = 0
    for c in cells:
        if trace:
            rows, nrows = K.push(rows, nrows, c)
        if not K.sphere_touches_row(center, radius, cell_lo, cell_hi, c):
            continue
        for j in range(start[c], start[c + 1]):
            s = items[j]
            tested += 1
            if K.sphere_touches_row(center, radius, lo, hi, s):
                out, m = K.push(out, m, s)
    return out[:m], len(cells), tested, rows[:nrows]


@numba.njit(cache=True, nogil=True)
def grid_query_frustum(planes, g, trace):
    """Candidates (with duplicates) kept by the frustum test; every occupied cell is culled by
    the union box of its objects, which contains each of them, so no object is lost."""
    start, items, cell_lo, cell_hi, lo, hi = (g.start, g.items, g.cell_lo, g.cell_hi, g.obj_lo,
                                              g.obj_hi)
    n_cells = cell_lo.shape[0]
    out = np.empty(64, dtype=np.int64)
    rows = np.empty(16, dtype=np.int64)
    culled = np.empty(16, dtype=np.int64)
    m = 0
    nrows = 0
    nculled = 0
    tested = 0
    for c in range(n_cells):
        if trace:
            rows, nrows = K.push(rows, nrows, c)
        if not K.frustum_keeps_row(planes, cell_lo, cell_hi, c):
            if trace:
                culled, nculled = K.push(culled, nculled, c)
            continue
        for j in range(start[c], start[c + 1]):
            s = items[j]
            tested += 1
            if K.frustum_keeps_row(planes, lo, hi, s):
                out, m = K.push(out, m, s)
    return out[:m], n_cells, tested, rows[:nrows], culled[:nculled]


@numba.njit(cache=True, inline="always")
def _ray_march(origin_pt, direction, max_t, closest, g, out, ts, m, rows, nrows, trace):
    """March the ray through the occupied scene bounds one cell length at a time.

    Each step visits the cells of the step's segment box, padded by a few ulps so an entry
    point rounded onto a cell face still reaches both cells; objects are tested with the exact
    slab formula. In ``closest`` mode the march stops one step after the best hit's ``t``.
    Inlined into the two ray kernels (which compiled a copy each anyway): a call taking ``g``
    per ray made closest-hit rays a fifth slower.
    """
    lo, hi, obj_ids, cell = g.obj_lo, g.obj_hi, g.obj_ids, g.cell
    world_lo, world_hi, start, items = g.world_lo, g.world_hi, g.start, g.items
    origin, inv, clamp_lo, clamp_hi = g.origin, g.inv, g.clamp_lo, g.clamp_hi
    cell_lo, cell_hi, coords = g.cell_lo, g.cell_hi, g.coords
    dims, hashed, dense, tkeys, tvals = g.dims, g.hashed, g.dense, g.tkeys, g.tvals
    inv_d = K.ray_setup(direction)
    visited = 0
    tested = 0
    best_t = max_t
    best_s = -1
    best_id = -1
    # the parameter interval the ray spends inside the scene bounds
    t0 = 0.0
    t1 = max_t
    for a in range(3):
        if direction[a] == 0.0:
            if not (world_lo[a] <= origin_pt[a] <= world_hi[a]):
                return out, ts, m, best_s, best_t, visited, tested, rows, nrows
        else:
            ta = (world_lo[a] - origin_pt[a]) * inv_d[a]
            tb = (world_hi[a] - origin_pt[a]) * inv_d[a]
            if ta > tb:
                ta, tb = tb, ta
            t0 = max(t0, ta)
            t1 = min(t1, tb)
    if not t0 <= t1:
        return out, ts, m, best_s, best_t, visited, tested, rows, nrows
    dmax = max(abs(direction[0]), abs(direction[1]), abs(direction[2]))
    step = cell / dmax
    # a little slack on t so rounding in the interval above can never drop an edge hit
    slack = 1e-9 * (t1 - t0) + 1e-12 * abs(t0)
    t0 = max(t0 - slack, 0.0)
    t1 = t1 + slack
    n_steps = int(math.ceil((t1 - t0) / step)) if t1 > t0 else 1
    n_steps = max(n_steps, 1)
    seg_lo = np.empty(3)
    seg_hi = np.empty(3)
    for k in range(n_steps):
        ta = t0 + k * step
        tb = min(t0 + (k + 1) * step, t1)
        if closest and best_s >= 0 and best_t < ta - slack:
            break
        for a in range(3):
            pa = origin_pt[a] + ta * direction[a]
            pb = origin_pt[a] + tb * direction[a]
            pad = 1e-12 * (abs(origin_pt[a]) + abs(pa) + abs(pb)) + 1e-9 * cell
            seg_lo[a] = min(pa, pb) - pad
            seg_hi[a] = max(pa, pb) + pad
        rlo, rhi = _range_of(seg_lo, seg_hi, origin, inv, clamp_lo, clamp_hi)
        cells = _cells_in(rlo, rhi, dims, hashed, dense, tkeys, tvals, coords)
        for c in cells:
            visited += 1
            if trace:
                rows, nrows = K.push(rows, nrows, c)
            tc = K.ray_slab_row(origin_pt, direction, inv_d, cell_lo, cell_hi, c)
            if tc == np.inf or tc > best_t:
                continue
            for j in range(start[c], start[c + 1]):
                s = items[j]
                tested += 1
                t = K.ray_slab_row(origin_pt, direction, inv_d, lo, hi, s)
                if t == np.inf or t > max_t:
                    continue
                if closest:
                    if t < best_t or (t == best_t and (best_s < 0 or obj_ids[s] < best_id)):
                        best_t = t
                        best_s = s
                        best_id = obj_ids[s]
                else:
                    out, m = K.push(out, m, s)
                    ts, _ = K.push(ts, m - 1, t)
    return out, ts, m, best_s, best_t, visited, tested, rows, nrows


@numba.njit(cache=True, nogil=True)
def grid_query_ray(origin_pt, direction, max_t, g, trace):
    """Every hit of one ray (with duplicates); ``(slots, t, visited, tested, cells)``."""
    out = np.empty(64, dtype=np.int64)
    ts = np.empty(64)
    rows = np.empty(16, dtype=np.int64)
    zero = np.int64(0)  # typed counters: a literal 0 would compile another signature
    out, ts, m, _, _, visited, tested, rows, nrows = _ray_march(
        origin_pt, direction, max_t, False, g, out, ts, zero, rows, zero, trace)
    return out[:m], ts[:m], visited, tested, rows[:nrows]


@numba.njit(cache=True, nogil=True)
def grid_query_rays(origins, directions, max_t, g):
    """Closest hit per ray; ``(slots, t, visited, tested)``, slot ``-1`` on a miss."""
    nq = origins.shape[0]
    best_slots = np.full(nq, -1, dtype=np.int64)
    best_ts = np.full(nq, np.inf)
    visited = np.zeros(nq, dtype=np.int64)
    tested = np.zeros(nq, dtype=np.int64)
    out = np.empty(1, dtype=np.int64)
    ts = np.empty(1)
    rows = np.empty(1, dtype=np.int64)
    # literal arguments: a copy specialised for the closest hit, with no output or trace
    # buffers, twice as fast as one testing runtime flags
    for q in range(nq):
        out, ts, _, s, t, v, n, rows, _ = _ray_march(
            origins[q], directions[q], max_t, True, g, out, ts, 0, rows, 0, False)
        best_slots[q] = s
        best_ts[q] = t if s >= 0 else np.inf
        visited[q] = v
        tested[q] = n
    return best_slots, best_ts, visited, tested


@numba.njit(cache=True, nogil=True)
def cell_start(i, origin, inv, lo_clamp, hi_clamp):
    """The smallest coordinate ``x`` with ``_coord(x) >= i``: cell ``i``'s lower bound on one
    axis, so that ``_coord(x) == i`` exactly when ``cell_start(i) <= x < cell_start(i + 1)``
    (``_coord`` rounds, but never decreases as ``x`` grows). ``-inf`` and ``inf`` past the
    clamped border cells, which own everything beyond them."""
    if i <= lo_clamp:
        return -np.inf
    if i > hi_clamp:
        return np.inf
    guess = origin + i / inv
    # bracket the boundary around the guess (a few ulps off), then bisect it down to one ulp
    a = guess
    b = guess
    step = 1e-15 * (abs(guess) + abs(origin) + 1.0 / inv)
    while _coord(a, origin, inv, lo_clamp, hi_clamp) >= i:
        a = min(a - step, np.nextafter(a, -np.inf))
        step *= 2.0
    step = 1e-15 * (abs(guess) + abs(origin) + 1.0 / inv)
    while _coord(b, origin, inv, lo_clamp, hi_clamp) < i:
        b = max(b + step, np.nextafter(b, np.inf))
        step *= 2.0
    while True:
        mid = a + 0.5 * (b - a)
        if mid <= a or mid >= b:
            return b
        if _coord(mid, origin, inv, lo_clamp, hi_clamp) >= i:
            b = mid
        else:
            a = mid


@numba.njit(cache=True, nogil=True)
def cell_starts(coords, origin, inv, clamp_lo, clamp_hi):
    """:func:`cell_start` of every coordinate the cells ``coords`` span, and one past, per axis:
    ``(lowest, starts)`` with ``starts[ax, i - lowest[ax]]`` = ``cell_start(i)`` on axis ``ax``.
    Empty ``starts`` when the span is many times the cells (a spatial hash's cells far apart),
    where finding each cell's bounds as it comes costs less."""
    lowest = np.zeros(3, dtype=np.int64)
    width = np.int64(0)
    if coords.shape[0] == 0:
        return lowest, np.empty((3, 0))
    for ax in range(3):
        low = coords[0, ax]
        high = coords[0, ax]
        for c in range(coords.shape[0]):
            low = min(low, coords[c, ax])
            high = max(high, coords[c, ax])
        lowest[ax] = low
        width = max(width, high - low + 2)
    if width > 2 * coords.shape[0] + 64:
        return lowest, np.empty((3, 0))
    starts = np.empty((3, width))
    for ax in range(3):
        for i in range(width):
            starts[ax, i] = cell_start(lowest[ax] + i, origin[ax], inv, clamp_lo[ax], clamp_hi[ax])
    return lowest, starts


@numba.njit(cache=True, nogil=True)
def grid_pairs(g, active, only_active):
    """Pairs inside every cell of grid ``g``, each reported in the cell owning
    ``max(lo_a, lo_b)``."""
    origin, inv, clamp_lo, clamp_hi = g.origin, g.inv, g.clamp_lo, g.clamp_hi
    coords, start, items, lo, hi = g.coords, g.start, g.items, g.obj_lo, g.obj_hi
    n_cells = coords.shape[0]
    out = np.empty((1024, 2), dtype=np.int64)
    m = np.int64(0)  # typed, not the literal 0: one signature of owned_list_pairs
    tests = 0
    cell_tests = np.zeros(n_cells, dtype=np.int64)
    box = np.empty((64, 6))
    cell_lo = np.empty(3)
    cell_hi = np.empty(3)
    # each cell's bounds are a bisection down to one ulp per axis: made once per coordinate
    # (the cells come in no order that keeps two coordinates, so per cell that was half the
    # pair finding of a live game's frame)
    lowest, starts = cell_starts(coords, origin, inv, clamp_lo, clamp_hi)
    tabulated = starts.shape[1] > 0
    known = np.full(3, np.iinfo(np.int64).min)  # the coordinate whose bounds cell_lo/hi hold
    for c in range(n_cells):
        first = start[c]
        count = start[c + 1] - first
        if count < 2:
            continue
        if only_active and not K.any_active(items, first, count, active):
            continue
        for ax in range(3):
            i = coords[c, ax]
            if tabulated:
                cell_lo[ax] = starts[ax, i - lowest[ax]]
                cell_hi[ax] = starts[ax, i - lowest[ax] + 1]
            elif i != known[ax]:
                known[ax] = i
                cell_lo[ax] = cell_start(i, origin[ax], inv, clamp_lo[ax], clamp_hi[ax])
                cell_hi[ax] = cell_start(i + 1, origin[ax], inv, clamp_lo[ax], clamp_hi[ax])
        out, m, local, box = K.owned_list_pairs(items, first, count, lo, hi, active, only_active,
                                                box, cell_lo, cell_hi, out, m)
        cell_tests[c] = local
        tests += local
    return out[:m], tests, cell_tests


@numba.njit(cache=True, nogil=True)
def check_cells(alive, ranges_now, coords, start, items, slot_limit, alive_mask):
    """``(code, where)``: 0 when every object is in exactly the cells of its range, once."""
    refs = np.zeros(slot_limit, dtype=np.int64)
    seen = np.full(slot_limit, -1, dtype=np.int64)
    row_of = np.full(slot_limit, -1, dtype=np.int64)
    for i in range(len(alive)):
        row_of[alive[i]] = i
    for c in range(coords.shape[0]):
        for j in range(start[c], start[c + 1]):
            s = items[j]
            if s >= slot_limit or not alive_mask[s]:
                return 1, s
            if seen[s] == c:
                return 2, s
            seen[s] = c
            r = row_of[s]
            for a in range(3):
                if coords[c, a] < ranges_now[r, a] or coords[c, a] > ranges_now[r, 3 + a]:
                    return 3, s
            refs[s] += 1
    for i in range(len(alive)):
        s = alive[i]
        expected = 1
        for a in range(3):
            expected *= ranges_now[i, 3 + a] - ranges_now[i, a] + 1
        if refs[s] != expected:
            return 4, s
    return 0, 0

