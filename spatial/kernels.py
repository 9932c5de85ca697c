"""Compiled kernels every spatial backend builds on: one copy of each predicate and traversal.

Public API for built-in and third-party backends (see ``plugins/README.md``). Everything here is a
numba ``njit`` function with an on-disk cache, meant to be called from a backend's own kernels.

**Predicates.** They repeat, operation for operation, the reference formulas of
:mod:`spatial.geometry` (closed overlap, the slab ray test with its entry ``t``, the closest-point
sphere test and the positive-vertex frustum test), so a backend's answers and ray distances are
bit-identical to the brute-force oracle's. Each comes in two forms:

* a *vector* form on 3-vectors (``overlap``, ``ray_slab``, ``sphere_touches``, ``frustum_keeps``),
* a *row* form reading row ``row`` of ``(n, >=3)`` arrays by index (``overlap_row``,
  ``ray_slab_row``, ``sphere_touches_row``, ``frustum_keeps_row``): no array view per test,
  which in a hot loop costs more than the test itself. ``lo_col``/``hi_col`` are the first
  column of the low and high corner, so one packed ``(n, 6)`` array serves as both
  (``overlap_row(box, box, row, qlo, qhi, 0, 3)``).

Culling with a tolerance (a node dropped only when *clearly* outside: for trees whose node bounds
come from rounded plane arithmetic) is ``sphere_may_touch`` and ``frustum_may_keep``.

**Query shapes.** One encoding for every backend: a kind (:data:`BOX`, :data:`SPHERE`,
:data:`RAY`, :data:`FRUSTUM`) and a float64 parameter vector of :data:`SHAPE_LEN` values: a box
is ``lo, hi``; a sphere ``centre, radius``; a ray ``origin, direction, max_t``; a frustum keeps
its ``(k, 4)`` planes in a separate array. :class:`QueryShape` and its constructors build them in
Python; :func:`shape_meets_row` tests one box against any kind.

**Buffers.** :func:`grow`, :func:`push` and :func:`push_pair` give growable arrays inside kernels;
:func:`pop2` and :func:`pop3` take the top row off a ``(cap, k)`` stack of pending work.

**Traversal.** :func:`tree_query` is the one depth-first stack traversal of the flat binary-tree
layout (:class:`TreeArrays`) that the kd-tree and the BVH produce, parameterised by the query
shape; :func:`tree_query_boxes` and :func:`tree_query_rays_closest` are its batch forms.

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

from typing import NamedTuple

import numba
import numpy as np

INF = np.inf

#: query kinds of the shared shape encoding
BOX = 0
SPHERE = 1
RAY = 2
FRUSTUM = 3
#: length of a shape's parameter vector (a ray's origin, direction and ``max_t``)
SHAPE_LEN = 7


class QueryShape(NamedTuple):
    """A query in the shared encoding: ``kind``, ``params`` (float64, :data:`SHAPE_LEN`) and
    ``planes`` (``(k, 4)``, empty unless the kind is :data:`FRUSTUM`)."""

    kind: int
    params: np.ndarray
    planes: np.ndarray


_NO_PLANES = np.zeros((0, 4))


def _shape(kind, *parts, planes=_NO_PLANES) -> QueryShape:
    params = np.zeros(SHAPE_LEN)
    flat = np.concatenate([np.ravel(np.asarray(p, dtype=np.float64)) for p in parts]) if parts \
        else np.zeros(0)
    params[:len(flat)] = flat
    return QueryShape(kind, params, np.ascontiguousarray(planes, dtype=np.float64).reshape(-1, 4))


def box_shape(lo, hi) -> QueryShape:
    """The closed box ``[lo, hi]`` (a point is a box with ``lo == hi``)."""
    return _shape(BOX, lo, hi)


def sphere_shape(centre, radius) -> QueryShape:
    """The closed sphere of ``radius`` around ``centre``."""
    return _shape(SPHERE, centre, [radius])


def ray_shape(origin, direction, max_t) -> QueryShape:
    """The ray ``origin + t * direction`` for ``0 <= t <= max_t``."""
    return _shape(RAY, origin, direction, [max_t])


def frustum_shape(planes) -> QueryShape:
    """The frustum of inward-facing ``(k, 4)`` planes (positive-vertex test)."""
    return _shape(FRUSTUM, planes=planes)


class TreeArrays(NamedTuple):
    """The flat binary-tree layout the shared traversals read (see the module notes)."""

    root: int
    node_lo: np.ndarray
    node_hi: np.ndarray
    left: np.ndarray
    right: np.ndarray
    item_start: np.ndarray
    item_count: np.ndarray
    items: np.ndarray
    obj_lo: np.ndarray
    obj_hi: np.ndarray


class TreeHits(NamedTuple):
    """What :func:`tree_query` found: slots (with ray ``t``), work done and traced node ids."""

    slots: np.ndarray
    t: np.ndarray
    visited: int
    tested: int
    rows: np.ndarray
    culled: np.ndarray


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
    """Push ``value``; grow the stack when full (through :func:`grow`, whose element loop
    compiles faster than a slice copy). Returns ``(stack, new_sp)``."""
    if sp == len(stack):
        stack = grow(stack, sp + 1)
    stack[sp] = value
    return stack, sp + 1


@numba.njit(cache=True, inline="always")
def push_pair(out, m, a, b):
    """Append the pair ``(a, b)`` to a growable ``(cap, 2)`` array."""
    if m == len(out):
        out = grow(out, m + 1)
    out[m, 0] = a
    out[m, 1] = b
    return out, m + 1


@numba.njit(cache=True, inline="always")
def batch_counters(nq):
    """Bookkeeping of a batch of ``nq`` queries, zeroed: CSR ``offsets`` (``nq + 1``) and the
    per-query ``visited`` and ``tested`` counts."""
    return (np.zeros(nq + 1, dtype=np.int64), np.zeros(nq, dtype=np.int64),
            np.zeros(nq, dtype=np.int64))


@numba.njit(cache=True, inline="always")
def close_query(q, m, v, t, offsets, visited, tested):
    """Record query ``q`` of a batch (arrays from :func:`batch_counters`): its answers end at
    ``m`` in the CSR output; it visited ``v`` nodes and tested ``t`` objects."""
    visited[q] = v
    tested[q] = t
    offsets[q + 1] = m


@numba.njit(cache=True, inline="always")
def pop2(stack, sp):
    """Pop the top row of a ``(cap, >=2)`` integer stack of pending work: ``(sp - 1, first,
    second)``. Scalars only, so the inlined pop costs no array view or reference count in the
    hot loop (pushes stay in the callers, which grow once for the several rows they push)."""
    sp -= 1
    return sp, stack[sp, 0], stack[sp, 1]


@numba.njit(cache=True, inline="always")
def pop3(stack, sp):
    """:func:`pop2` for a ``(cap, >=3)`` stack: ``(sp - 1, first, second, third)``."""
    sp -= 1
    return sp, stack[sp, 0], stack[sp, 1], stack[sp, 2]


@numba.njit(cache=True, inline="always")
def push_sorted(items, keys, k, item, key):
    """Insert ``item`` with ``key`` into the first ``k`` entries kept in *descending* key order
    (so that, pushed on a stack in that order, the smallest key is popped first); returns
    ``k + 1``. For the handful of children of one node: an insertion sort."""
    j = k
    while j > 0 and keys[j - 1] < key:
        items[j] = items[j - 1]
        keys[j] = keys[j - 1]
        j -= 1
    items[j] = item
    keys[j] = key
    return k + 1


# --------------------------------------------------------------------------- predicates, row form
# A predicate reads box ``row`` of ``lo``/``hi`` by index, from column ``lo_col`` / ``hi_col``.
@numba.njit(cache=True, inline="always")
def overlap_row(lo, hi, row, qlo, qhi, lo_col=0, hi_col=0):
    """Closed overlap of box ``row`` with ``qlo/qhi`` (:func:`spatial.geometry.boxes_overlap`)."""
    # a loop with an early exit: several times faster in the hot loops than one chained
    # expression, which LLVM turns into branch-free code that always reads all six values
    for k in range(3):
        if lo[row, lo_col + k] > qhi[k] or qlo[k] > hi[row, hi_col + k]:
            return False
    return True


@numba.njit(cache=True, inline="always")
def ray_setup(direction):
    """Reciprocal direction with 0 on parallel axes, as :func:`spatial.geometry.ray_box` does."""
    inv = np.zeros(3)
    for k in range(3):
        if direction[k] != 0.0:
            inv[k] = 1.0 / direction[k]
    return inv


@numba.njit(cache=True, inline="always")
def ray_slab_inv_row(origin, inv, lo, hi, row, lo_col=0, hi_col=0):
    """Entry ``t`` of the ray into closed box ``row``, or ``inf`` on a miss, from the reciprocal
    direction alone: an axis with ``inv == 0`` is one the ray runs parallel to (as
    :func:`ray_setup` marks it; for a finite direction ``1 / d`` is never 0).

    Same operations as :func:`spatial.geometry.ray_box`, so ``t`` is bit-identical.
    """
    t_enter = -INF
    t_exit = INF
    for k in range(3):
        blo = lo[row, lo_col + k]
        bhi = hi[row, hi_col + k]
        if inv[k] == 0.0:
            if not (blo <= origin[k] and origin[k] <= bhi):
                return INF
        else:
            t1 = (blo - origin[k]) * inv[k]
            t2 = (bhi - origin[k]) * inv[k]
            # min/max rather than branches: LLVM makes them branch-free, measurably faster
            t_enter = max(t_enter, min(t1, t2))
            t_exit = min(t_exit, max(t1, t2))
    t_enter = max(t_enter, 0.0)
    if t_enter <= t_exit:
        return t_enter
    return INF


@numba.njit(cache=True, inline="always")
def ray_slab_row(origin, direction, inv, lo, hi, row, lo_col=0, hi_col=0):
    """Entry ``t`` of the ray into closed box ``row``, or ``inf`` on a miss.

    Same operations as :func:`spatial.geometry.ray_box`, so ``t`` is bit-identical; ``inv`` comes
    from :func:`ray_setup` (``direction`` is kept for the callers' symmetry: ``inv`` already
    marks the parallel axes, see :func:`ray_slab_inv_row`).
    """
    return ray_slab_inv_row(origin, inv, lo, hi, row, lo_col, hi_col)


@numba.njit(cache=True, inline="always")
def sphere_distance2_row(center, lo, hi, row, lo_col=0, hi_col=0):
    """Squared distance from ``center`` to closed box ``row`` (0 inside)."""
    d2 = 0.0
    for k in range(3):
        c = center[k]
        x = c
        if x < lo[row, lo_col + k]:
            x = lo[row, lo_col + k]
        if x > hi[row, hi_col + k]:
            x = hi[row, hi_col + k]
        d = x - c
        d2 += d * d
    return d2


@numba.njit(cache=True, inline="always")
def sphere_touches_row(center, radius, lo, hi, row, lo_col=0, hi_col=0):
    """Closed sphere/box test of :func:`spatial.geometry.sphere_box`."""
    return sphere_distance2_row(center, lo, hi, row, lo_col, hi_col) <= radius * radius


@numba.njit(cache=True, inline="always")
def sphere_may_touch_row(center, radius, lo, hi, row, slack):
    """:func:`sphere_touches_row` that culls only boxes clearly away (relative ``slack``)."""
    return sphere_distance2_row(center, lo, hi, row) <= radius * radius * (1.0 + slack)


@numba.njit(cache=True, inline="always")
def frustum_keeps_row(planes, lo, hi, row, lo_col=0, hi_col=0):
    """Positive-vertex test of :func:`spatial.geometry.frustum_box`."""
    for p in range(planes.shape[0]):
        nx, ny, nz, d = planes[p, 0], planes[p, 1], planes[p, 2], planes[p, 3]
        px = hi[row, hi_col] if nx >= 0 else lo[row, lo_col]
        py = hi[row, hi_col + 1] if ny >= 0 else lo[row, lo_col + 1]
        pz = hi[row, hi_col + 2] if nz >= 0 else lo[row, lo_col + 2]
        if px * nx + py * ny + pz * nz + d < 0:
            return False
    return True


@numba.njit(cache=True, inline="always")
def frustum_may_keep_row(planes, lo, hi, row, slack):
    """Positive-vertex test that culls box ``row`` only when it is outside a plane by more than
    ``slack`` times the magnitude of the terms: for node bounds that carry rounding."""
    for p in range(planes.shape[0]):
        dist = planes[p, 3]
        scale = abs(planes[p, 3])
        for k in range(3):
            v = hi[row, k] if planes[p, k] >= 0 else lo[row, k]
            dist += v * planes[p, k]
            scale += abs(v * planes[p, k])
        if dist < -slack * scale:
            return False
    return True


@numba.njit(cache=True, inline="always")
def in_cell(p0, p1, p2, clo, chi):
    """Half-open cell ownership ``clo <= p < chi`` of a reference point."""
    return (clo[0] <= p0 and p0 < chi[0] and clo[1] <= p1 and p1 < chi[1]
            and clo[2] <= p2 and p2 < chi[2])


# --------------------------------------------------------------------------- predicates, vectors
@numba.njit(cache=True, inline="always")
def dot3(a, b):
    """Dot product of two 3-vectors, written out: numba's ``@`` and ``np.dot`` call BLAS, which
    it takes from scipy, a package a plain install does not have."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


# The same tests on lone 3-vectors: row 0 of a (1, 3) view.
@numba.njit(cache=True, inline="always")
def _row(v):
    return v.reshape((1, 3))


@numba.njit(cache=True, inline="always")
def overlap(alo, ahi, blo, bhi):
    """Closed box overlap of two ``lo, hi`` 3-vector pairs."""
    return overlap_row(_row(alo), _row(ahi), 0, blo, bhi)


@numba.njit(cache=True, inline="always")
def ray_slab(origin, direction, inv, lo, hi):
    """:func:`ray_slab_row` on a box given as two 3-vectors."""
    return ray_slab_row(origin, direction, inv, _row(lo), _row(hi), 0)


@numba.njit(cache=True, inline="always")
def sphere_touches(center, radius, lo, hi):
    """:func:`sphere_touches_row` on a box given as two 3-vectors."""
    return sphere_touches_row(center, radius, _row(lo), _row(hi), 0)


@numba.njit(cache=True, inline="always")
def frustum_keeps(planes, lo, hi):
    """:func:`frustum_keeps_row` on a box given as two 3-vectors."""
    return frustum_keeps_row(planes, _row(lo), _row(hi), 0)


# --------------------------------------------------------------------------- pairs in a list
@numba.njit(cache=True, inline="always")
def any_active(items, start, count, active):
    """Does ``items[start: start + count]`` hold an object with ``active`` set?"""
    for i in range(start, start + count):
        if active[items[i]]:
            return True
    return False


@numba.njit(cache=True, inline="always")
def list_pairs(items, start, count, lo, hi, active, only_active, out, m):
    """Overlapping pairs (closed test) among ``items[start: start + count]``, appended to the
    growable ``(cap, 2)`` array ``out`` from ``m`` as ``(items[i], items[j])`` with ``i < j``.

    With ``only_active`` a pair needs at least one ``active`` object. Returns ``(out, m,
    tests)``: ``tests`` counts the box tests made.
    """
    tests = 0
    if only_active and not any_active(items, start, count, active):
        return out, m, tests
    for i in range(start, start + count):
        a = items[i]
        for j in range(i + 1, start + count):
            b = items[j]
            if only_active and not (active[a] or active[b]):
                continue
            tests += 1
            if overlap_row(lo, hi, b, lo[a], hi[a]):
                out, m = push_pair(out, m, a, b)
    return out, m, tests


@numba.njit(cache=True, nogil=True)
def owned_list_pairs(items, start, count, lo, hi, active, only_active, box, cell_lo, cell_hi,
                     out, m):
    """Overlapping pairs among ``items[start: start + count]`` owned by the half-open region
    ``cell_lo <= p < cell_hi``, for a backend that stores an object in every cell or leaf its
    box reaches (the kd-tree, the grid).

    A pair is kept only when its reference point ``p = max(lo_a, lo_b)``, which lies in both
    boxes, lies in the region: exactly one list holding both objects owns it, so each pair
    comes out once without a mark array. With ``only_active`` a pair needs an ``active``
    object. The boxes are first copied to the packed scratch ``box`` (``(cap, 6)``, grown when
    short) so the pair loop reads one cache line per box. Returns ``(out, m, tests, box)``;
    ``tests`` counts the box tests.
    """
    if count > box.shape[0]:
        box = np.empty((2 * count, 6))
    for i in range(count):
        o = items[start + i]
        for k in range(3):
            box[i, k] = lo[o, k]
            box[i, 3 + k] = hi[o, k]
    # the bounds as scalars: read from the arrays inside the loop they cost the kd-tree's
    # pair finding 70 % (measured), the compiler then reloading them after every append
    c0, c1, c2 = cell_lo[0], cell_lo[1], cell_lo[2]
    d0, d1, d2 = cell_hi[0], cell_hi[1], cell_hi[2]
    tests = 0
    for i in range(count):
        a = items[start + i]
        for j in range(i + 1, count):
            b = items[start + j]
            if only_active and not (active[a] or active[b]):
                continue
            tests += 1
            if (box[i, 0] <= box[j, 3] and box[j, 0] <= box[i, 3]
                    and box[i, 1] <= box[j, 4] and box[j, 1] <= box[i, 4]
                    and box[i, 2] <= box[j, 5] and box[j, 2] <= box[i, 5]):
                p0 = max(box[i, 0], box[j, 0])
                p1 = max(box[i, 1], box[j, 1])
                p2 = max(box[i, 2], box[j, 2])
                if c0 <= p0 and p0 < d0 and c1 <= p1 and p1 < d1 and c2 <= p2 and p2 < d2:
                    out, m = push_pair(out, m, a, b)
    return out, m, tests, box


# --------------------------------------------------------------------------- query shapes
@numba.njit(cache=True, inline="always")
def unpack_shape(kind, params):
    """The parts of an encoded shape a node test reads, taken out once per query:
    ``(a, b, scalar, inv)`` = box ``lo, hi``; sphere ``centre, -, radius``; ray ``origin,
    direction, max_t`` and the reciprocal direction (zeros for the other kinds)."""
    a = params[0:3].copy()
    b = params[3:6].copy()
    scalar = params[6] if kind == RAY else params[3]
    inv = ray_setup(b) if kind == RAY else np.zeros(3)
    return a, b, scalar, inv


@numba.njit(cache=True, inline="always")
def shape_meets_row(kind, a, b, scalar, inv, planes, lo, hi, row, lo_col=0, hi_col=0):
    """Entry ``t`` of a query shape (parts from :func:`unpack_shape`) into box ``row``: ``inf``
    when they do not meet, else the ray's entry ``t`` (kind :data:`RAY`, up to ``max_t``) or 0."""
    if kind == BOX:
        return 0.0 if overlap_row(lo, hi, row, a, b, lo_col, hi_col) else INF
    if kind == SPHERE:
        return 0.0 if sphere_touches_row(a, scalar, lo, hi, row, lo_col, hi_col) else INF
    if kind == RAY:
        t = ray_slab_row(a, b, inv, lo, hi, row, lo_col, hi_col)
        return t if t <= scalar else INF
    return 0.0 if frustum_keeps_row(planes, lo, hi, row, lo_col, hi_col) else INF



@numba.njit(cache=True, inline="always")
def shape_may_meet_row(kind, a, b, scalar, inv, planes, lo, hi, row, slack):
    """Culling form of :func:`shape_meets_row` for node bounds that carry rounding: a sphere or
    frustum drops box ``row`` only when it is clearly outside (relative ``slack``, see
    :func:`sphere_may_touch_row` and :func:`frustum_may_keep_row`); boxes and rays test
    exactly."""
    if kind == BOX:
        return overlap_row(lo, hi, row, a, b)
    if kind == SPHERE:
        return sphere_may_touch_row(a, scalar, lo, hi, row, slack)
    if kind == RAY:
        t = ray_slab_row(a, b, inv, lo, hi, row)
        return t < INF and t <= scalar
    return frustum_may_keep_row(planes, lo, hi, row, slack)


@numba.njit(cache=True, inline="always")
def candidate_buffers(slot_limit, n_nodes, trace):
    """Scratch of a query that collects the distinct objects of the leaves it reaches:
    ``(seen, out, rows, culled)`` = the marks of :func:`push_unseen` per slot, its growable
    output, and room for the visited and the culled node rows of a trace (``n_nodes`` each,
    empty without ``trace``)."""
    rows = np.empty(n_nodes if trace else 0, dtype=np.int64)
    culled = np.empty(n_nodes if trace else 0, dtype=np.int64)
    return np.zeros(max(slot_limit, 1), dtype=np.bool_), np.empty(16, dtype=np.int64), rows, culled


@numba.njit(cache=True, inline="always")
def record_visit(trace, keep, node, rows, n_rows, culled, n_culled):
    """With ``trace``, note ``node`` in ``rows`` when the query keeps it, else in ``culled``
    (both with room for every node, as :func:`candidate_buffers` makes them). Returns the
    new ``(n_rows, n_culled)``."""
    if trace:
        if keep:
            rows[n_rows] = node
            n_rows += 1
        else:
            culled[n_culled] = node
            n_culled += 1
    return n_rows, n_culled


@numba.njit(cache=True, inline="always")
def push_unseen(items, start, count, seen, out, m):
    """Append the slots of ``items[start: start + count]`` not yet marked in the boolean array
    ``seen`` to the growable ``out`` from ``m``, marking them: the distinct objects of the
    leaves a query reaches, when one object is stored in several leaves. Returns
    ``(out, m)``."""
    for i in range(start, start + count):
        o = items[i]
        if not seen[o]:
            seen[o] = True
            out, m = push(out, m, o)
    return out, m

# --------------------------------------------------------------------------- tree queries
@numba.njit(cache=True, inline="always")
def _traverse(tree, kind, a, b, scalar, inv, planes, use_cells, cell_lo, cell_hi,
              out, ts, m, stack, rows, nrows, culled, nculled, trace):
    """The one depth-first traversal: nodes whose bounds meet the shape are opened, their own
    slots tested; slots that meet are appended to ``out`` (with their ``t`` to ``ts``) from
    ``m``. Inlined, so the batched box query, which passes the constant kind, gets a copy
    with the other kinds' branches folded away."""
    visited = 0
    tested = 0
    if tree.root < 0:
        return out, ts, m, visited, tested, rows, nrows, culled, nculled
    sp = 0
    stack, sp = push(stack, sp, tree.root)
    while sp > 0:
        sp -= 1
        n = stack[sp]
        visited += 1
        if trace:
            rows, nrows = push(rows, nrows, n)
        if shape_meets_row(kind, a, b, scalar, inv, planes, tree.node_lo, tree.node_hi, n) == INF:
            if trace:
                culled, nculled = push(culled, nculled, n)
            continue
        start = tree.item_start[n]
        for k in range(tree.item_count[n]):
            s = tree.items[start + k]
            tested += 1
            t = shape_meets_row(kind, a, b, scalar, inv, planes, tree.obj_lo, tree.obj_hi, s)
            if t == INF:
                continue
            if use_cells and kind == BOX:
                p0 = max(tree.obj_lo[s, 0], a[0])
                p1 = max(tree.obj_lo[s, 1], a[1])
                p2 = max(tree.obj_lo[s, 2], a[2])
                if not in_cell(p0, p1, p2, cell_lo[n], cell_hi[n]):
                    continue
            out, m = push(out, m, s)
            if kind == RAY:
                ts, _ = push(ts, m - 1, t)
        if tree.left[n] >= 0:
            stack, sp = push(stack, sp, tree.right[n])
            stack, sp = push(stack, sp, tree.left[n])
    return out, ts, m, visited, tested, rows, nrows, culled, nculled


@numba.njit(cache=True, nogil=True)
def tree_query(tree, kind, params, planes, use_cells, cell_lo, cell_hi, trace):
    """One query of any shape on a :class:`TreeArrays` tree.

    ``kind``/``params``/``planes`` are the shared shape encoding; ``use_cells`` (box queries
    only) reports each slot once by its reference point's cell (``cell_lo/cell_hi`` per node).
    Returns ``(slots, t, visited, tested, rows, culled)``: ``t`` per slot for rays, the node ids
    visited and those culled by the shape when ``trace``.
    """
    a, b, scalar, inv = unpack_shape(kind, params)
    out = np.empty(64, dtype=np.int64)
    ts = np.empty(64 if kind == RAY else 0)
    stack = np.empty(64, dtype=np.int64)
    rows = np.empty(16, dtype=np.int64)
    culled = np.empty(16, dtype=np.int64)
    out, ts, m, visited, tested, rows, nrows, culled, nculled = _traverse(
        tree, kind, a, b, scalar, inv, planes, use_cells, cell_lo, cell_hi,
        out, ts, 0, stack, rows, 0, culled, 0, trace)
    return out[:m], ts[:m if kind == RAY else 0], visited, tested, rows[:nrows], culled[:nculled]


_NO_CELLS = np.zeros((0, 3))


def query_tree(tree: TreeArrays, shape: QueryShape, trace: bool, cell_lo=None,
               cell_hi=None) -> TreeHits:
    """:func:`tree_query` for a :class:`QueryShape`; give ``cell_lo/cell_hi`` to have box
    queries report each slot once by cell (a tree that stores copies, like the kd-tree)."""
    use_cells = cell_lo is not None and shape.kind == BOX
    if cell_lo is None:
        cell_lo = cell_hi = _NO_CELLS
    return TreeHits(*tree_query(tree, shape.kind, shape.params, shape.planes, use_cells,
                                cell_lo, cell_hi, trace))


@numba.njit(cache=True, nogil=True)
def tree_query_boxes(tree, qlos, qhis, use_cells, cell_lo, cell_hi):
    """Many box queries; CSR ``(slots, offsets, visited, tested)``."""
    nq = qlos.shape[0]
    out = np.empty(max(64, 4 * nq), dtype=np.int64)
    ts = np.empty(0)
    offsets, visited, tested = batch_counters(nq)
    stack = np.empty(64, dtype=np.int64)
    rows = np.empty(1, dtype=np.int64)
    culled = np.empty(1, dtype=np.int64)
    inv = np.zeros(3)
    planes = np.zeros((0, 4))
    m = 0
    for q in range(nq):
        out, ts, m, v, t, rows, _, culled, _ = _traverse(
            tree, BOX, qlos[q], qhis[q], 0.0, inv, planes, use_cells, cell_lo, cell_hi,
            out, ts, m, stack, rows, 0, culled, 0, False)
        close_query(q, m, v, t, offsets, visited, tested)
    return out[:m], offsets, visited, tested

@numba.njit(cache=True, nogil=True)
def tree_query_rays_closest(tree, obj_ids, origins, directions, max_t):
    """Closest hit per ray, front to back with early exit; ties go to the smaller id.

    A node is entered only if its entry ``t`` does not exceed the best hit so far: the slab
    formula is monotonic in the box, so an object inside a node is never nearer than the node.
    Returns ``(slots, t, visited, tested)`` with slot ``-1`` and ``t = inf`` on a miss.
    """
    root, node_lo, node_hi, left, right = tree.root, tree.node_lo, tree.node_hi, tree.left, tree.right
    item_start, item_count, items, obj_lo, obj_hi = (tree.item_start, tree.item_count, tree.items,
                                                     tree.obj_lo, tree.obj_hi)
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
            t_root = ray_slab_row(origin, direction, inv, node_lo, node_hi, root)
            if t_root < INF and t_root <= best_t:
                stack, sp = push(stack, sp, root)
                tstack, tp = push(tstack, tp, t_root)
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
                t = ray_slab_row(origin, direction, inv, obj_lo, obj_hi, s)
                if t < INF and (t < best_t or (t == best_t
                                                and (best_s < 0 or obj_ids[s] < best_id))):
                    best_t = t
                    best_s = s
                    best_id = obj_ids[s]
            if left[n] >= 0:
                a = left[n]
                b = right[n]
                ta = ray_slab_row(origin, direction, inv, node_lo, node_hi, a)
                tb = ray_slab_row(origin, direction, inv, node_lo, node_hi, b)
                if ta > tb:
                    a, b = b, a
                    ta, tb = tb, ta
                # push the far child first so the near one is explored first
                if tb < INF and tb <= best_t:
                    stack, sp = push(stack, sp, b)
                    tstack, tp = push(tstack, tp, tb)
                if ta < INF and ta <= best_t:
                    stack, sp = push(stack, sp, a)
                    tstack, tp = push(tstack, tp, ta)
        best_slots[q] = best_s
        best_ts[q] = best_t if best_s >= 0 else INF
        visited[q] = v
        tested[q] = tc
    return best_slots, best_ts, visited, tested


# --------------------------------------------------------------------------- bookkeeping
@numba.njit(cache=True, nogil=True)
def compact_leaf_lists(is_leaf, start, count, work):
    """The item lists of the leaves packed one after another, as a finished tree stores them.

    ``work[start[n]: start[n] + count[n]]`` is node ``n``'s list during the build (for the
    first ``len(is_leaf)`` nodes). Returns ``(items, leaf_start, leaf_count)``: inner nodes get
    an empty range at the position where the next leaf's list begins.
    """
    n_nodes = len(is_leaf)
    total = 0
    for node in range(n_nodes):
        if is_leaf[node]:
            total += count[node]
    items = np.empty(total, dtype=np.int64)
    leaf_start = np.zeros(n_nodes, dtype=np.int64)
    leaf_count = np.zeros(n_nodes, dtype=np.int64)
    pos = 0
    for node in range(n_nodes):
        leaf_start[node] = pos
        if is_leaf[node]:
            for i in range(count[node]):
                items[pos + i] = work[start[node] + i]
            leaf_count[node] = count[node]
            pos += count[node]
    return items, leaf_start, leaf_count


@numba.njit(cache=True, nogil=True)
def preorder_limited(root, left, right, limit):
    """Node ids in depth-first preorder (parents before children, left subtree first), with
    parent *rows* (``-1`` at the root) and depths; at most ``limit`` nodes.

    Returns ``(order, parent_rows, depths, complete)``: ``complete`` is false when more than
    ``limit`` nodes were reachable, as in a corrupt tree whose links form a cycle (the walk
    stops there instead of running on). A tree's node count as ``limit`` also sizes the output
    at once.
    """
    cap = max(min(limit, len(left)), 1)
    order = np.empty(cap, dtype=np.int64)
    parents = np.empty(cap, dtype=np.int64)
    depths = np.empty(cap, dtype=np.int64)
    m = 0
    # one stack row per pending node: id, parent row, depth
    stack = np.empty((64, 3), dtype=np.int64)
    sp = 0
    if root >= 0:
        stack[0, 0] = root
        stack[0, 1] = -1
        stack[0, 2] = 0
        sp = 1
    complete = True
    while sp > 0:
        if m == limit:
            complete = False
            break
        sp -= 1
        n = stack[sp, 0]
        if m == len(order):  # more nodes than ids: a cycle
            order = grow(order, m + 1)
            parents = grow(parents, m + 1)
            depths = grow(depths, m + 1)
        order[m] = n
        parents[m] = stack[sp, 1]
        depths[m] = stack[sp, 2]
        m += 1
        if left[n] >= 0:
            stack = grow(stack, sp + 2)
            for child in (right[n], left[n]):
                stack[sp, 0] = child
                stack[sp, 1] = m - 1
                stack[sp, 2] = depths[m - 1] + 1
                sp += 1
    return order[:m], parents[:m], depths[:m], complete


@numba.njit(cache=True, nogil=True)
def preorder(root, left, right):
    """Node ids in depth-first preorder (parents before children), with parent rows and depths
    (:func:`preorder_limited` without a limit)."""
    order, parents, depths, _ = preorder_limited(root, left, right, np.iinfo(np.int64).max)
    return order, parents, depths


def slots_to_ids(object_ids, slots):
    """Map slots to ids, keeping ``-1`` (no hit) as ``-1``."""
    slots = np.asarray(slots, dtype=np.int64)
    out = np.full(len(slots), -1, dtype=np.int64)
    hit = slots >= 0
    out[hit] = object_ids[slots[hit]]
    return out
