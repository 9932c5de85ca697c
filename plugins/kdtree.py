"""kd-tree backend: axis-aligned splits placed to fit the objects.

Each inner node cuts its cell with one axis-aligned plane ``x[axis] = split``, chosen by the
binned surface-area heuristic (``split="sah"``, the default: minimise
``traversal_cost + intersection_cost * (A_L N_L + A_R N_R) / A``) or at the median of the object
centres (``split="median"``). SAH is the default because on 100k mixed-size random boxes it
stores fewer than half the references of median splits (straddlers copied less often) and
answers pairs and queries faster.

Straddling objects go to **both** sides (the classic kd-tree): an object goes left when
``lo[axis] < split`` and right when ``hi[axis] >= split``, so each leaf owns the half-open region
``cell_lo <= p < cell_hi`` and every object sits in every leaf whose region its closed box meets.
Answers are de-duplicated without mark arrays by a reference point: a box query reports an
object only in the leaf owning ``max(object lo, query lo)``, and ``pairs`` reports ``(a, b)``
only in the leaf owning ``max(lo_a, lo_b)``. Sphere, frustum and ray answers are made unique
after the traversal. Node bounds (``lo``/``hi`` of :meth:`nodes`) are the union of the objects
below; box, sphere and ray searches prune with that union clipped to the node's cell (so a copied
straddler does not stretch every node it lands in), frustum culling with the union itself.
``core_lo``/``core_hi`` are the cells clipped to the scene.

The tree suits static scenes: every edit marks it dirty and the next query or inspection
rebuilds it from scratch (``stats()["rebuilds"]`` counts them). ``leaf_size`` is honoured
except where no plane separates the objects of a leaf (coincident boxes), at ``max_depth``, or
once the references reach :data:`REFERENCE_BUDGET` times the object count (which keeps heavily
overlapping scenes from multiplying copies without bound).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numba
import numpy as np

import spatial.kernels as K
from spatial.contract import BatchResult, FrustumHits, NodeTable, RayBatchResult, RayHits, SlotHits, SpatialIndex
from spatial.errors import IndexInvariantError
from spatial.memory_budget import budgeted_tree_bytes
from spatial.params import param

#: Most object references the tree may hold, as a multiple of the object count.
REFERENCE_BUDGET = 16

# column layout of the float and int node tables the build kernel fills
_LO, _HI, _CLO, _CHI, _SPLIT = 0, 3, 6, 9, 12
_LEFT, _RIGHT, _PARENT, _DEPTH, _START, _COUNT, _AXIS = range(7)


@dataclass(frozen=True)
class KdParams:
    """Parameters of :class:`KdTree`."""

    split: str = param("sah", choices=("sah", "median"),
                       help="Split placement: surface-area heuristic, or median of object centres.")
    leaf_size: int = param(8, lo=1, hi=4096, unit="objects", scale="log",
                           help="Most objects per leaf before it splits.")
    max_depth: int = param(32, lo=1, hi=64, unit="levels",
                           help="Deepest level; nodes there stay leaves whatever they hold.")
    traversal_cost: float = param(1.0, lo=0.01, hi=100.0, scale="log",
                                  help="SAH cost of visiting an inner node (relative units).")
    intersection_cost: float = param(1.0, lo=0.01, hi=100.0, scale="log",
                                     help="SAH cost of testing one object (relative units).")
    sah_bins: int = param(32, lo=4, hi=256, unit="planes", scale="log",
                          help="Candidate planes per axis the SAH evaluates in each node.")


# --------------------------------------------------------------------------- build kernel
@numba.njit(cache=True)
def _area(lo0, lo1, lo2, hi0, hi1, hi2):
    dx = hi0 - lo0
    dy = hi1 - lo1
    dz = hi2 - lo2
    return 2.0 * (dx * dy + dy * dz + dz * dx)


@numba.njit(cache=True)
def _count_sides(buf, s, c, lo, hi, axis, split):
    n_left = 0
    n_right = 0
    for k in range(s, s + c):
        o = buf[k]
        if lo[o, axis] < split:
            n_left += 1
        if hi[o, axis] >= split:
            n_right += 1
    return n_left, n_right


@numba.njit(cache=True)
def _median_split(buf, s, c, lo, hi, glo, ghi):
    """First axis (longest cell extent first) whose centre median separates the objects,
    else the most balanced plane through an object's ``lo`` face; ``(-1, 0)`` if none exists."""
    ext = ghi - glo
    order = np.argsort(-ext)
    centres = np.empty(c)
    for j in range(3):
        axis = order[j]
        for k in range(c):
            o = buf[s + k]
            centres[k] = 0.5 * (lo[o, axis] + hi[o, axis])
        split = np.median(centres)
        n_left, n_right = _count_sides(buf, s, c, lo, hi, axis, split)
        if n_left < c and n_right < c:
            return axis, split
        # the median may sit on a crowd of equal centres: try just above it
        above = np.inf
        for k in range(c):
            if centres[k] > split and centres[k] < above:
                above = centres[k]
        if above < np.inf:
            n_left, n_right = _count_sides(buf, s, c, lo, hi, axis, above)
            if n_left < c and n_right < c:
                return axis, above
    # large straddlers can defeat every centre median: try planes on object faces (``lo``),
    # which separate whenever some object ends before another begins; keep the most balanced
    best_axis = -1
    best_split = 0.0
    best_worst = c
    stride = max(1, c // 64)
    los = np.empty(c)
    for axis in range(3):
        for k in range(c):
            los[k] = lo[buf[s + k], axis]
        los.sort()
        for k in range(0, c, stride):
            n_left, n_right = _count_sides(buf, s, c, lo, hi, axis, los[k])
            worst = max(n_left, n_right)
            if worst < best_worst:
                best_worst = worst
                best_axis = axis
                best_split = los[k]
    return best_axis, best_split


@numba.njit(cache=True)
def _sah_split(buf, s, c, lo, hi, glo, ghi, ct, ci, nbins):
    """Binned SAH plane over the node's (clipped) cell: ``(axis, split)`` or ``(-1, 0)``."""
    area = _area(glo[0], glo[1], glo[2], ghi[0], ghi[1], ghi[2])
    best_cost = np.inf
    best_axis = -1
    best_split = 0.0
    lo_hist = np.zeros(nbins, dtype=np.int64)
    hi_hist = np.zeros(nbins, dtype=np.int64)
    for axis in range(3):
        width = ghi[axis] - glo[axis]
        if not width > 0.0:
            continue
        lo_hist[:] = 0
        hi_hist[:] = 0
        scale = nbins / width
        for k in range(s, s + c):
            o = buf[k]
            b = int((lo[o, axis] - glo[axis]) * scale)
            lo_hist[min(max(b, 0), nbins - 1)] += 1
            b = int((hi[o, axis] - glo[axis]) * scale)
            hi_hist[min(max(b, 0), nbins - 1)] += 1
        n_left = 0
        n_right = c
        for plane in range(1, nbins):
            n_left += lo_hist[plane - 1]
            n_right -= hi_hist[plane - 1]
            if n_left >= c or n_right >= c:
                continue
            x = glo[axis] + plane * (width / nbins)
            ext = ghi - glo
            ext[axis] = x - glo[axis]
            a_left = _area(0.0, 0.0, 0.0, ext[0], ext[1], ext[2])
            ext[axis] = ghi[axis] - x
            a_right = _area(0.0, 0.0, 0.0, ext[0], ext[1], ext[2])
            if area > 0.0:
                cost = ct + ci * (a_left * n_left + a_right * n_right) / area
            else:
                cost = ct + ci * (n_left + n_right)
            if cost < best_cost:
                best_cost = cost
                best_axis = axis
                best_split = x
    return best_axis, best_split


@numba.njit(cache=True)
def _grow_nodes(nf, ni, needed):
    if needed <= nf.shape[0]:
        return nf, ni
    cap = max(needed, 2 * nf.shape[0])
    nf2 = np.empty((cap, nf.shape[1]))
    ni2 = np.empty((cap, ni.shape[1]), dtype=np.int64)
    nf2[: nf.shape[0]] = nf
    ni2[: ni.shape[0]] = ni
    return nf2, ni2


@numba.njit(cache=True)
def build_kd(slots, lo, hi, use_sah, leaf_size, max_depth, ct, ci, nbins, ref_budget):
    """Top-down build with a buffer used as a stack (the pending node's objects on top).

    Returns ``(nf, ni, items, node_count)``: float columns lo, hi, cell lo, cell hi, split;
    int columns left, right, parent, depth, item start, item count, axis.
    """
    n = len(slots)
    nf = np.empty((max(64, n // 2), 13))
    ni = np.empty((max(64, n // 2), 7), dtype=np.int64)
    items = np.empty(max(64, n), dtype=np.int64)
    n_items = 0
    buf = np.empty(max(64, 3 * n), dtype=np.int64)
    buf[:n] = slots
    root_lo = np.full(3, np.inf)
    root_hi = np.full(3, -np.inf)
    for k in range(n):
        o = slots[k]
        for a in range(3):
            root_lo[a] = min(root_lo[a], lo[o, a])
            root_hi[a] = max(root_hi[a], hi[o, a])
    nf[0, _CLO:_CLO + 3] = -np.inf
    nf[0, _CHI:_CHI + 3] = np.inf
    nf[0, _SPLIT] = 0.0
    ni[0, _PARENT] = -1
    ni[0, _DEPTH] = 0
    node_count = 1
    refs = n
    st_node = np.empty(64, dtype=np.int64)
    st_start = np.empty(64, dtype=np.int64)
    st_count = np.empty(64, dtype=np.int64)
    sp = 0
    st_node, _ = K.push(st_node, sp, 0)
    st_start, _ = K.push(st_start, sp, 0)
    st_count, sp = K.push(st_count, sp, n)
    glo = np.empty(3)
    ghi = np.empty(3)
    while sp > 0:
        sp -= 1
        node = st_node[sp]
        s = st_start[sp]
        c = st_count[sp]
        for a in range(3):
            mn = np.inf
            mx = -np.inf
            for k in range(s, s + c):
                o = buf[k]
                mn = min(mn, lo[o, a])
                mx = max(mx, hi[o, a])
            nf[node, _LO + a] = mn
            nf[node, _HI + a] = mx
            glo[a] = max(nf[node, _CLO + a], root_lo[a])
            ghi[a] = min(nf[node, _CHI + a], root_hi[a])
        axis = -1
        split = 0.0
        if c > leaf_size and ni[node, _DEPTH] < max_depth:
            if use_sah:
                axis, split = _sah_split(buf, s, c, lo, hi, glo, ghi, ct, ci, nbins)
                if axis >= 0:
                    n_left, n_right = _count_sides(buf, s, c, lo, hi, axis, split)
                    if n_left >= c or n_right >= c:
                        axis = -1
            if axis < 0:
                axis, split = _median_split(buf, s, c, lo, hi, glo, ghi)
        if axis >= 0:
            n_left, n_right = _count_sides(buf, s, c, lo, hi, axis, split)
            if refs + n_left + n_right - c > ref_budget:
                axis = -1
        if axis < 0:
            ni[node, _LEFT] = -1
            ni[node, _RIGHT] = -1
            ni[node, _AXIS] = -1
            ni[node, _START] = n_items
            ni[node, _COUNT] = c
            if n_items + c > len(items):
                grown = np.empty(max(2 * len(items), n_items + c), dtype=np.int64)
                grown[:n_items] = items[:n_items]
                items = grown
            items[n_items:n_items + c] = buf[s:s + c]
            n_items += c
            continue
        refs += n_left + n_right - c
        if s + c + n_left + n_right > len(buf):
            grown = np.empty(2 * (s + c + n_left + n_right), dtype=np.int64)
            grown[:s + c] = buf[:s + c]
            buf = grown
        wl = s + c
        wr = s + c + n_left
        for k in range(s, s + c):
            o = buf[k]
            if lo[o, axis] < split:
                buf[wl] = o
                wl += 1
            if hi[o, axis] >= split:
                buf[wr] = o
                wr += 1
        # compact: right half to s, left half above it (the left child is processed next)
        for k in range(n_right):
            buf[s + k] = buf[s + c + n_left + k]
        for k in range(n_left):
            buf[s + n_right + k] = buf[s + c + k]
        nf, ni = _grow_nodes(nf, ni, node_count + 2)
        left = node_count
        right = node_count + 1
        node_count += 2
        ni[node, _LEFT] = left
        ni[node, _RIGHT] = right
        ni[node, _AXIS] = axis
        ni[node, _START] = 0
        ni[node, _COUNT] = 0
        nf[node, _SPLIT] = split
        for child in (left, right):
            nf[child, _CLO:_CLO + 3] = nf[node, _CLO:_CLO + 3]
            nf[child, _CHI:_CHI + 3] = nf[node, _CHI:_CHI + 3]
            nf[child, _SPLIT] = 0.0
            ni[child, _PARENT] = node
            ni[child, _DEPTH] = ni[node, _DEPTH] + 1
        nf[left, _CHI + axis] = split
        nf[right, _CLO + axis] = split
        st_node, _ = K.push(st_node, sp, right)
        st_start, _ = K.push(st_start, sp, s)
        st_count, sp = K.push(st_count, sp, n_right)
        st_node, _ = K.push(st_node, sp, left)
        st_start, _ = K.push(st_start, sp, s + n_right)
        st_count, sp = K.push(st_count, sp, n_left)
    return nf[:node_count].copy(), ni[:node_count].copy(), items[:n_items].copy(), node_count


# --------------------------------------------------------------------------- pairs / checks
@numba.njit(cache=True)
def _leaf_pairs(left, item_start, item_count, items, lo, hi, cell_lo, cell_hi, active,
                leaf_active, only_active):
    """Pairs inside every leaf; a pair is reported only in the leaf owning ``max(lo_a, lo_b)``."""
    out = np.empty((1024, 2), dtype=np.int64)
    m = 0
    n_nodes = len(left)
    node_tests = np.zeros(n_nodes, dtype=np.int64)
    tests = 0
    box = np.empty((64, 6))
    for n in range(n_nodes):
        if left[n] >= 0 or item_count[n] < 2:
            continue
        if only_active and not leaf_active[n]:
            continue
        start = item_start[n]
        c = item_count[n]
        if c > len(box):
            box = np.empty((2 * c, 6))
        for i in range(c):  # gather the leaf's boxes once: the pair loop then stays in cache
            o = items[start + i]
            for ax in range(3):
                box[i, ax] = lo[o, ax]
                box[i, 3 + ax] = hi[o, ax]
        c0, c1, c2 = cell_lo[n, 0], cell_lo[n, 1], cell_lo[n, 2]
        d0, d1, d2 = cell_hi[n, 0], cell_hi[n, 1], cell_hi[n, 2]
        local = 0
        for i in range(c):
            a = items[start + i]
            for j in range(i + 1, c):
                b = items[start + j]
                if only_active and not (active[a] or active[b]):
                    continue
                local += 1
                if (box[i, 0] <= box[j, 3] and box[j, 0] <= box[i, 3]
                        and box[i, 1] <= box[j, 4] and box[j, 1] <= box[i, 4]
                        and box[i, 2] <= box[j, 5] and box[j, 2] <= box[i, 5]):
                    p0 = max(box[i, 0], box[j, 0])
                    p1 = max(box[i, 1], box[j, 1])
                    p2 = max(box[i, 2], box[j, 2])
                    if (c0 <= p0 and p0 < d0 and c1 <= p1 and p1 < d1
                            and c2 <= p2 and p2 < d2):
                        out, m = K.push_pair(out, m, a, b)
        node_tests[n] = local
        tests += local
    return out[:m], tests, node_tests


@numba.njit(cache=True)
def _check_tree(nf, ni, items, lo, hi, alive_slots, slot_limit):
    """Return ``(code, where)``; code 0 means every invariant holds."""
    n_nodes = nf.shape[0]
    refs = np.zeros(slot_limit, dtype=np.int64)
    for n in range(n_nodes):
        left = ni[n, _LEFT]
        if left >= 0:
            if ni[n, _COUNT] != 0:
                return 1, n  # inner node holding objects
            axis = ni[n, _AXIS]
            split = nf[n, _SPLIT]
            for child in (left, ni[n, _RIGHT]):
                if ni[child, _PARENT] != n or child <= n:
                    return 2, child  # broken parent link or order
                for a in range(3):
                    if nf[child, _LO + a] < nf[n, _LO + a] or nf[child, _HI + a] > nf[n, _HI + a]:
                        return 3, child  # child bounds escape the parent's
            if nf[left, _CHI + axis] != split or nf[ni[n, _RIGHT], _CLO + axis] != split:
                return 4, n  # child cells do not meet at the split
            continue
        for k in range(ni[n, _START], ni[n, _START] + ni[n, _COUNT]):
            o = items[k]
            refs[o] += 1
            for a in range(3):
                # left side: lo < split; right side: hi >= split (see the module docstring)
                if not (lo[o, a] < nf[n, _CHI + a] and hi[o, a] >= nf[n, _CLO + a]):
                    return 5, o  # object stored on the wrong side of a split
                if lo[o, a] < nf[n, _LO + a] or hi[o, a] > nf[n, _HI + a]:
                    return 6, o  # leaf bounds miss an object
    # every object is in exactly the leaves whose cells its box reaches
    stack = np.empty(64, dtype=np.int64)
    for o in alive_slots:
        expected = 0
        sp = 0
        stack, sp = K.push(stack, sp, 0)
        while sp > 0:
            sp -= 1
            n = stack[sp]
            if ni[n, _LEFT] < 0:
                expected += 1
                continue
            axis = ni[n, _AXIS]
            if lo[o, axis] < nf[n, _SPLIT]:
                stack, sp = K.push(stack, sp, ni[n, _LEFT])
            if hi[o, axis] >= nf[n, _SPLIT]:
                stack, sp = K.push(stack, sp, ni[n, _RIGHT])
        if refs[o] != expected:
            return 7, o
        refs[o] = 0
    for o in range(slot_limit):
        if refs[o] != 0:
            return 8, o  # a removed object is still stored
    return 0, 0


@numba.njit(cache=True)
def _sum_up(parents, values):
    """Subtree sums of a per-node value (children are numbered after their parents)."""
    out = values.copy()
    for node in range(len(parents) - 1, 0, -1):
        out[parents[node]] += out[node]
    return out


_CHECK_MESSAGES = {
    1: "inner node {} stores objects",
    2: "node {} has a broken parent link or comes before its parent",
    3: "node {} bounds are not inside its parent's",
    4: "the children of node {} do not meet at its split plane",
    5: "object slot {} is stored in a leaf on the wrong side of a split",
    6: "object slot {} is not inside its leaf's bounds",
    7: "object slot {} is not in exactly the leaves its box reaches",
    8: "removed object slot {} is still stored",
}


# --------------------------------------------------------------------------- backend
class KdTree(SpatialIndex):
    """kd-tree with median or SAH splits; straddlers stored on both sides, answers unique."""

    name = "kdtree"
    dims = 3
    description = "kd-tree: axis-aligned median or SAH splits; best for static scenes."
    Params = KdParams
    branching = 2
    param_variants = [{"split": "median"}, {"leaf_size": 1},
                      {"split": "median", "leaf_size": 2, "max_depth": 5}]

    @classmethod
    def worst_case_bytes(cls, params, lo, hi) -> float:
        """References capped at :data:`REFERENCE_BUDGET` per object; node arrays and lists grow
        by doubling."""
        return budgeted_tree_bytes(len(lo), references_per_object=REFERENCE_BUDGET,
                                   max_depth=params.max_depth, node_bytes=2 * 8 * (13 + 7),
                                   reference_bytes=2 * 8 + 8)

    def _setup(self) -> None:
        self._nf = np.empty((0, 13))
        self._ni = np.empty((0, 7), dtype=np.int64)
        self._items = np.empty(0, dtype=np.int64)
        self._dirty = True
        self._rebuilds = 0
        self._rebuild_ms = 0.0

    # ---------------------------------------------------------------- edits: rebuild lazily
    def _build(self, slots) -> None:
        self._dirty = True

    def _insert(self, slots) -> None:
        self._dirty = True

    def _remove(self, slots) -> None:
        self._dirty = True

    def _update(self, slots) -> None:
        self._dirty = True

    def _flush(self) -> None:
        if not self._dirty:
            return
        start = time.perf_counter()
        slots = self.objects.alive_slots().astype(np.int64)
        p = self.params
        if len(slots):
            nf, ni, items, _ = build_kd(slots, self.objects.lo, self.objects.hi, p.split == "sah",
                                        p.leaf_size, p.max_depth, p.traversal_cost,
                                        p.intersection_cost, p.sah_bins,
                                        REFERENCE_BUDGET * len(slots))
        else:
            nf, ni, items = np.empty((0, 13)), np.empty((0, 7), dtype=np.int64), np.empty(0, np.int64)
        self._nf, self._ni, self._items = nf, ni, items
        self._node_lo = np.ascontiguousarray(nf[:, _LO:_LO + 3])
        self._node_hi = np.ascontiguousarray(nf[:, _HI:_HI + 3])
        self._cell_lo = np.ascontiguousarray(nf[:, _CLO:_CLO + 3])
        self._cell_hi = np.ascontiguousarray(nf[:, _CHI:_CHI + 3])
        # Search bounds: the objects' union clipped to the closed cell. A copied straddler
        # would otherwise stretch every node it lands in over the whole of itself. The clip is
        # padded far above rounding so that an entry point or reference point computed on a
        # split plane still falls inside (frustum culling keeps the unclipped union: the
        # positive-vertex test is not exact enough to cull by pieces of an object).
        if len(nf):
            scale = float(np.abs(np.concatenate([self._node_lo[0], self._node_hi[0]])).max())
            pad = 1e-9 * (scale + 1.0)
            self._search_lo = np.maximum(self._node_lo, self._cell_lo - pad)
            self._search_hi = np.minimum(self._node_hi, self._cell_hi + pad)
        else:
            self._search_lo, self._search_hi = self._node_lo, self._node_hi
        self._left = np.ascontiguousarray(ni[:, _LEFT])
        self._right = np.ascontiguousarray(ni[:, _RIGHT])
        self._start = np.ascontiguousarray(ni[:, _START])
        self._count = np.ascontiguousarray(ni[:, _COUNT])
        self._dirty = False
        self._rebuilds += 1
        self._rebuild_ms = (time.perf_counter() - start) * 1e3

    # ---------------------------------------------------------------- queries
    def _tree(self, clipped: bool = True):
        root = 0 if len(self._left) else -1
        lo, hi = (self._search_lo, self._search_hi) if clipped else (self._node_lo, self._node_hi)
        return K.TreeArrays(root, lo, hi, self._left, self._right, self._start, self._count,
                            self._items, self.objects.lo, self.objects.hi)

    @staticmethod
    def _rows(rows, trace):
        return np.asarray(rows, dtype=np.int64) if trace else None

    def _query(self, shape, trace, clipped=True):
        return K.query_tree(self._tree(clipped), shape, trace, self._cell_lo, self._cell_hi)

    def _query_box(self, lo, hi, trace):
        hits = self._query(K.box_shape(lo, hi), trace)
        return SlotHits(hits.slots, hits.visited, hits.tested, self._rows(hits.rows, trace))

    def _query_sphere(self, center, radius, trace):
        hits = self._query(K.sphere_shape(center, radius), trace)
        return SlotHits(np.unique(hits.slots), hits.visited, hits.tested, self._rows(hits.rows, trace))

    def _query_ray(self, origin, direction, max_t, trace):
        hits = self._query(K.ray_shape(origin, direction, max_t), trace)
        slots, first = np.unique(hits.slots, return_index=True)
        return RayHits(slots, hits.t[first], hits.visited, hits.tested, self._rows(hits.rows, trace))

    def _query_frustum(self, planes, trace):
        hits = self._query(K.frustum_shape(planes), trace, clipped=False)
        return FrustumHits(np.unique(hits.slots), hits.visited, hits.tested, self._rows(hits.rows, trace),
                self._rows(hits.culled, trace))

    def _query_boxes(self, lo, hi) -> BatchResult:
        slots, offsets, visited, tested = K.tree_query_boxes(self._tree(), lo, hi, True,
                                                             self._cell_lo, self._cell_hi)
        return BatchResult(self.objects.ids[slots], offsets, visited, tested)

    def _query_rays(self, origins, directions, max_t) -> RayBatchResult:
        slots, t, visited, tested = K.tree_query_rays_closest(self._tree(), self.objects.ids,
                                                              origins, directions, max_t)
        return RayBatchResult(K.slots_to_ids(self.objects.ids, slots), t, visited, tested)

    # ---------------------------------------------------------------- pairs
    def _active_per_node(self):
        """Per node: does its subtree hold an active (dynamic and awake) object?"""
        active = self.objects.active_mask()
        n = len(self._left)
        node_active = np.zeros(n, dtype=bool)
        if n == 0:
            return active, node_active
        leaves = np.flatnonzero(self._left < 0)
        item_active = active[self._items] if len(self._items) else np.zeros(0, dtype=bool)
        running = np.concatenate([[0], np.cumsum(item_active, dtype=np.int64)])
        counts = running[self._start[leaves] + self._count[leaves]] - running[self._start[leaves]]
        node_active[leaves] = counts > 0
        return active, _sum_up(self._ni[:, _PARENT], node_active.astype(np.int64)) > 0

    def _pairs(self, mode):
        active, node_active = self._active_per_node()
        pairs, tests, node_tests = _leaf_pairs(self._left, self._start, self._count, self._items,
                                               self.objects.lo, self.objects.hi, self._cell_lo,
                                               self._cell_hi, active, node_active,
                                               mode == "active")
        return pairs, tests, node_tests

    # ---------------------------------------------------------------- inspection
    def _nodes(self) -> NodeTable:
        n = len(self._left)
        if n == 0:
            return NodeTable.empty(0)
        parents = self._ni[:, _PARENT]
        subtree = _sum_up(parents, self._count.astype(np.int64))
        _, node_active = self._active_per_node()
        scene_lo, scene_hi = self._node_lo[0], self._node_hi[0]
        core_lo = np.minimum(np.maximum(self._cell_lo, scene_lo), scene_hi)
        core_hi = np.maximum(np.minimum(self._cell_hi, scene_hi), core_lo)
        return NodeTable.from_columns(
            lo=self._node_lo, hi=self._node_hi, core_lo=core_lo, core_hi=core_hi,
            depth=self._ni[:, _DEPTH], parent=parents, is_leaf=self._left < 0,
            own_count=self._count, subtree_count=subtree, awake=node_active)

    def _node_objects(self, row):
        if not 0 <= row < len(self._left):
            raise IndexError(f"node row {row} does not exist ({len(self._left)} nodes)")
        start = self._start[row]
        return self._items[start:start + self._count[row]]

    def _validate(self) -> None:
        alive = self.objects.alive_slots().astype(np.int64)
        if len(self._left) == 0:
            if len(alive):
                raise IndexInvariantError(f"{len(alive)} objects but the tree is empty")
            return
        code, where = _check_tree(self._nf, self._ni, self._items, self.objects.lo,
                                  self.objects.hi, alive, self.objects.slot_limit)
        if code:
            raise IndexInvariantError("kdtree: " + _CHECK_MESSAGES[code].format(where))

    def _leaf_capacity(self) -> float:
        return float(self.params.leaf_size)

    def _memory_bytes(self) -> int:
        return int(self._nf.nbytes + self._ni.nbytes + self._items.nbytes)

    def sah_cost(self) -> float:
        """Expected cost of a random query by the surface-area heuristic (root area = 1)."""
        self._flush()
        n = len(self._left)
        if n == 0:
            return 0.0
        p = self.params
        scene_lo, scene_hi = self._node_lo[0], self._node_hi[0]
        glo = np.minimum(np.maximum(self._cell_lo, scene_lo), scene_hi)
        ghi = np.maximum(np.minimum(self._cell_hi, scene_hi), glo)
        d = ghi - glo
        area = 2.0 * (d[:, 0] * d[:, 1] + d[:, 1] * d[:, 2] + d[:, 2] * d[:, 0])
        root = area[0]
        weight = area / root if root > 0 else np.ones(n)
        inner = self._left >= 0
        return float(p.traversal_cost * weight[inner].sum()
                     + p.intersection_cost * (weight[~inner] * self._count[~inner]).sum())

    def _extra_stats(self) -> dict:
        leaves = self._left < 0
        return {
            "sah_cost": round(self.sah_cost(), 6),
            "max_leaf_objects": int(self._count[leaves].max()) if leaves.any() else 0,
            "duplication": round(len(self._items) / max(self.objects.count, 1), 4),
            "rebuilds": self._rebuilds,
            "last_rebuild_ms": round(self._rebuild_ms, 3),
        }


def register(registry) -> None:
    """Built-in plugin entry point."""
    registry.add_backend(KdTree)
