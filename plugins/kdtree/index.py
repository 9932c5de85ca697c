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

import numpy as np

import spatial.contract as C
import spatial.kernels as K
from spatial.contract import NodeTable, SpatialIndex
from spatial.errors import IndexInvariantError
from spatial.memory_budget import budgeted_tree_bytes
from spatial.params import param
from spatial.tree_queries import ClosestRayQueries

from . import kernels as kk

#: Most object references the tree may hold, as a multiple of the object count.
REFERENCE_BUDGET = 16


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
class KdTree(ClosestRayQueries, SpatialIndex):
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
            nf, ni, items, _ = kk.build_kd(slots, self.objects.lo, self.objects.hi, p.split == "sah",
                                        p.leaf_size, p.max_depth, p.traversal_cost,
                                        p.intersection_cost, p.sah_bins,
                                        REFERENCE_BUDGET * len(slots))
        else:
            nf, ni, items = np.empty((0, 13)), np.empty((0, 7), dtype=np.int64), np.empty(0, np.int64)
        self._nf, self._ni, self._items = nf, ni, items
        self._node_lo = np.ascontiguousarray(nf[:, kk.NF_LO:kk.NF_LO + 3])
        self._node_hi = np.ascontiguousarray(nf[:, kk.NF_HI:kk.NF_HI + 3])
        self._cell_lo = np.ascontiguousarray(nf[:, kk.NF_CELL_LO:kk.NF_CELL_LO + 3])
        self._cell_hi = np.ascontiguousarray(nf[:, kk.NF_CELL_HI:kk.NF_CELL_HI + 3])
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
        self._left = np.ascontiguousarray(ni[:, kk.NI_LEFT])
        self._right = np.ascontiguousarray(ni[:, kk.NI_RIGHT])
        self._start = np.ascontiguousarray(ni[:, kk.NI_START])
        self._count = np.ascontiguousarray(ni[:, kk.NI_COUNT])
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
        return C.SlotHits(hits.slots, hits.visited, hits.tested, self._rows(hits.rows, trace))

    def _query_sphere(self, center, radius, trace):
        hits = self._query(K.sphere_shape(center, radius), trace)
        return C.SlotHits(np.unique(hits.slots), hits.visited, hits.tested, self._rows(hits.rows, trace))

    def _query_ray(self, origin, direction, max_t, trace):
        hits = self._query(K.ray_shape(origin, direction, max_t), trace)
        slots, first = np.unique(hits.slots, return_index=True)
        return C.RayHits(slots, hits.t[first], hits.visited, hits.tested, self._rows(hits.rows, trace))

    def _query_frustum(self, planes, trace):
        hits = self._query(K.frustum_shape(planes), trace, clipped=False)
        return C.FrustumHits(np.unique(hits.slots), hits.visited, hits.tested, self._rows(hits.rows, trace),
                self._rows(hits.culled, trace))

    def _query_boxes(self, lo, hi) -> C.BatchResult:
        slots, offsets, visited, tested = K.tree_query_boxes(self._tree(), lo, hi, True,
                                                             self._cell_lo, self._cell_hi)
        return C.BatchResult(self.objects.ids[slots], offsets, visited, tested)

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
        return active, kk.subtree_sums(self._ni[:, kk.NI_PARENT], node_active.astype(np.int64)) > 0

    def _pairs(self, mode):
        active, node_active = self._active_per_node()
        pairs, tests, node_tests = kk.leaf_pairs(self._tree(), self._cell_lo, self._cell_hi,
                                                 active, node_active, mode == "active")
        return C.PairHits(pairs, tests, node_tests)

    # ---------------------------------------------------------------- inspection
    def _nodes(self) -> NodeTable:
        n = len(self._left)
        if n == 0:
            return NodeTable.empty(0)
        parents = self._ni[:, kk.NI_PARENT]
        subtree = kk.subtree_sums(parents, self._count.astype(np.int64))
        _, node_active = self._active_per_node()
        scene_lo, scene_hi = self._node_lo[0], self._node_hi[0]
        core_lo = np.minimum(np.maximum(self._cell_lo, scene_lo), scene_hi)
        core_hi = np.maximum(np.minimum(self._cell_hi, scene_hi), core_lo)
        return NodeTable.from_columns(
            lo=self._node_lo, hi=self._node_hi, core_lo=core_lo, core_hi=core_hi,
            depth=self._ni[:, kk.NI_DEPTH], parent=parents, is_leaf=self._left < 0,
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
        code, where = kk.check_tree(self._nf, self._ni, self._items, self.objects.lo,
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
