"""The quadtree backend: square buckets on one plane, objects stored in every leaf they overlap.

The tree partitions the two axes of its plane (``xy`` seen from above for z-up levels, ``xz``
for y-up engines) and ignores the third, but it answers in 3D: candidates are filtered with the
exact 3D tests, so every answer equals the brute-force oracle's.

Structure
    The root is a square enclosing the objects. A leaf is a bucket of up to ``max_objects``
    objects; when one overflows it splits in four and its objects are re-inserted. An object is
    stored in *every* leaf its plane box overlaps (closed: touching a split line puts it on
    both sides). A split must separate something, so a full leaf stays whole at ``max_depth``,
    when every object would land in all four children, or when the objects would on average be
    copied into more than ``max_duplication`` children (dense overlapping objects would
    otherwise be split down to ``max_depth`` for nothing). When objects leave, the highest
    ancestor whose distinct objects fit one bucket collapses back into a leaf. An object
    inserted or moved outside the root grows the root (twice the needed size) and rebuilds.
    ``validate()`` accepts a leaf over capacity only when one of those rules forbids its split.

Awake
    A node is awake while an *active* object (dynamic and awake) is stored under it; counters
    of active references per subtree keep this exact under every edit and ``set_awake``.
    ``pairs('active')`` skips sleeping subtrees entirely.

De-duplication
    A pair of objects sharing several leaves is tested in each (every test is counted) but
    reported only by the leaf that owns the low corner of their plane intersection. Inside a
    leaf the objects are swept along the ignored axis, so only pairs that overlap on it are
    tested. Queries stamp each object the first time they meet it, so it is tested once.

Culling
    Every node also keeps a *content box*: the union of the 3D boxes of what is stored under it
    (grown on insert, recomputed on collapse). Box, sphere and ray queries cull a node with its
    square clipped to that content box: an object always meets the square of one of its leaves
    inside that box. Frustum queries cull with the content box alone, because the conservative
    positive-vertex test can keep a box while rejecting every piece of it; the objects met are
    then kept or rejected with :func:`spatial.geometry.frustum_box` itself.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import spatial.contract as C
import spatial.kernels as K
from spatial.contract import NodeTable, SpatialIndex
from spatial.errors import IndexInvariantError
from spatial.geometry import frustum_box
from spatial.memory_budget import CellTree, cell_tree_bytes
from spatial.params import param

from . import kernels as qk

#: plane name -> (first plane axis, second plane axis, the axis the tree ignores)
PLANE_AXES = {"xy": (0, 1, 2), "xz": (0, 2, 1)}

#: a root grown for an object outside it gets this much room, so objects drifting past the
#: edge of the world do not rebuild the tree on every move
GROWTH_FACTOR = 2.0


#: validate() codes -> message; ``kinds`` says what each number is: n a node (reported as its
#: row of nodes()), s an object slot (reported as its id), v a plain value
_INVARIANTS = {
    1: ("vv", "node pool counts {1} live nodes but {0} are reachable from the root"),
    2: ("nn", "node {1} is listed as a child of node {0} but names another parent"),
    3: ("nn", "node {1} (child of {0}) has the wrong depth"),
    4: ("nn", "child {1} of node {0} does not cover its quarter of the parent square"),
    5: ("nv", "node {0} has depth {1}, beyond max_depth"),
    6: ("nvv", "leaf {0} says it holds {1} objects but its bucket has {2}"),
    7: ("nv", "leaf {0} holds slot {1}, which is not a live object"),
    8: ("ns", "leaf {0} holds object {1} twice"),
    9: ("ns", "leaf {0} holds object {1}, whose plane box does not overlap the leaf"),
    10: ("nvv", "node {0} counts {1} references in its subtree, actually {2}"),
    11: ("nvv", "node {0} counts {1} active references in its subtree, actually {2}"),
    12: ("ns", "content box of node {0} does not enclose object {1}"),
    13: ("nn", "content box of node {0} does not enclose that of its child {1}"),
    14: ("s", "object {0} is filed under stale bounds"),
    15: ("svv", "object {0} is in {1} leaves but overlaps {2}"),
    16: ("nv", "leaf {0} holds {1} objects, over capacity, yet is worth splitting"),
    17: ("s", "object {0} is counted with the wrong active flag"),
    18: ("s", "object {0} lies outside the root square"),
    19: ("n", "inner node {0} holds objects of its own"),
    20: ("nvv", "leaf {0} counts {1} references for a split, actually {2}"),
}


@dataclass(frozen=True)
class QuadtreeParams:
    """Shape of the quadtree."""

    max_depth: int = param(12, lo=1, hi=24, unit="levels",
                           help="Deepest level a leaf may split to (the root is level 0).")
    max_objects: int = param(8, lo=1, hi=4096, unit="objects", scale="log",
                             help="Leaf bucket capacity: a leaf holding more splits in four.")
    max_duplication: float = param(2.0, lo=1.0, hi=4.0, unit="copies per object",
                                   help="A full leaf splits only if its objects would land in at "
                                        "most this many of the four children on average.")
    plane: str = param("xy", choices=("xy", "xz"), unit="axes", tunable=False,
                       help="Plane partitioned: xy for z-up levels (top-down), xz for y-up engines.")


class Quadtree(SpatialIndex):
    """Region quadtree with bucket leaves and multi-leaf storage (see the module docstring)."""

    name = "quadtree"
    dims = 2
    branching = 4
    description = ("Quadtree: square bucket leaves on the xy or xz plane; an object is stored "
                   "in every leaf it overlaps.")
    Params = QuadtreeParams
    param_variants = [{"plane": "xz"}, {"max_objects": 1}, {"max_depth": 2}]

    @classmethod
    def worst_case_bytes(cls, params, lo, hi) -> float:
        """A split copies objects into at most ``max_duplication`` of four children on average,
        compounding per level down to ``max_depth`` (and no more cells than a box meets);
        node and reference arrays grow by doubling."""
        axes = PLANE_AXES[params.plane][:2]
        return cell_tree_bytes(lo, hi, CellTree(
            axes=tuple(axes), branching=4, max_depth=params.max_depth,
            capacity=params.max_objects, copies_per_split=float(params.max_duplication),
            node_bytes=2 * 8 * (qk.NF_COLS + qk.NI_COLS), reference_bytes=2 * 16))

    # ---------------------------------------------------------------- storage
    def _setup(self) -> None:
        self._axes = PLANE_AXES[self.params.plane]
        self._nf = np.zeros((64, qk.NF_COLS))
        self._ni = np.zeros((64, qk.NI_COLS), dtype=np.int64)
        self._ri = np.zeros((256, 2), dtype=np.int64)
        self._meta = np.zeros(qk.META_LEN, dtype=np.int64)
        self._ob = np.zeros((0, 4))
        self._oact = np.zeros(0, dtype=bool)
        self._mark = np.zeros(0, dtype=np.int64)
        self._order = None  # cached (order, row_of) of nodes(), dropped on every edit
        qk.reset(self._nf, self._ni, self._meta, 0.0, 0.0, 1.0, 1.0)

    def _sizes(self):
        p = self.params
        return p.max_objects, p.max_depth, float(p.max_duplication)

    def _fit_slot_arrays(self) -> None:
        cap = len(self.objects.lo)
        if len(self._ob) >= cap:
            return
        n = len(self._ob)
        ob = np.zeros((cap, 4))
        ob[:n] = self._ob
        oact = np.zeros(cap, dtype=bool)
        oact[:n] = self._oact
        mark = np.zeros(cap, dtype=np.int64)
        mark[:n] = self._mark
        self._ob, self._oact, self._mark = ob, oact, mark

    def _file(self, slots) -> None:
        """Record the plane boxes and active flags the tree files these slots under."""
        a0, a1, _ = self._axes
        obj = self.objects
        self._ob[slots, 0] = obj.lo[slots, a0]
        self._ob[slots, 1] = obj.lo[slots, a1]
        self._ob[slots, 2] = obj.hi[slots, a0]
        self._ob[slots, 3] = obj.hi[slots, a1]
        self._oact[slots] = obj.dynamic[slots] & obj.awake[slots]

    def _root(self):
        return self._nf[0, qk.SQ_LO0:qk.SQ_HI1 + 1]

    def _inside_root(self, slots) -> bool:
        a0, a1, _ = self._axes
        lo0, lo1, hi0, hi1 = self._root()
        obj = self.objects
        return bool((obj.lo[slots, a0] >= lo0).all() and (obj.lo[slots, a1] >= lo1).all()
                    and (obj.hi[slots, a0] <= hi0).all() and (obj.hi[slots, a1] <= hi1).all())

    def _root_square(self, slots, growth: float):
        """A square enclosing the plane boxes of ``slots`` (side scaled by ``growth``)."""
        a0, a1, _ = self._axes
        obj = self.objects
        if len(slots) == 0:
            return 0.0, 0.0, 1.0, 1.0
        lo = np.array([obj.lo[slots, a0].min(), obj.lo[slots, a1].min()])
        hi = np.array([obj.hi[slots, a0].max(), obj.hi[slots, a1].max()])
        centre = 0.5 * (lo + hi)
        side = float((hi - lo).max()) * growth
        if side <= 0.0:  # every object is the same point: any small square will do
            side = max(1e-9, 1e-9 * float(np.abs(centre).max()))
        sq_lo = np.minimum(centre - 0.5 * side, lo)  # min/max guard against rounding
        sq_hi = np.maximum(centre + 0.5 * side, hi)
        return float(sq_lo[0]), float(sq_lo[1]), float(sq_hi[0]), float(sq_hi[1])

    def _fill(self, slots, growth: float) -> None:
        """Rebuild the tree over ``slots`` (already filed) with a fresh root."""
        self._order = None
        qk.reset(self._nf, self._ni, self._meta, *self._root_square(slots, growth))
        cap, depth, dup = self._sizes()
        obj = self.objects
        self._nf, self._ni, self._ri = qk.build(
            self._nf, self._ni, self._ri, self._meta, self._ob, self._oact, obj.lo, obj.hi,
            np.ascontiguousarray(slots, dtype=np.int64), cap, depth, dup)

    def _grow_and_rebuild(self) -> None:
        slots = self.objects.alive_slots()
        self._file(slots)
        self._fill(slots, GROWTH_FACTOR)

    # ---------------------------------------------------------------- edits
    def _build(self, slots) -> None:
        self._fit_slot_arrays()
        slots = np.asarray(slots, dtype=np.int64)
        self._file(slots)
        self._fill(slots, 1.0)

    def _insert(self, slots) -> None:
        self._fit_slot_arrays()
        self._order = None
        if not self._inside_root(slots):
            self._grow_and_rebuild()
            return
        self._file(slots)
        cap, depth, dup = self._sizes()
        obj = self.objects
        self._nf, self._ni, self._ri = qk.insert(
            self._nf, self._ni, self._ri, self._meta, self._ob, self._oact, obj.lo, obj.hi,
            np.asarray(slots, dtype=np.int64), cap, depth, dup)

    def _remove(self, slots) -> None:
        self._order = None
        cap, depth, dup = self._sizes()
        obj = self.objects
        self._nf, self._ni, self._ri = qk.remove(
            self._nf, self._ni, self._ri, self._meta, self._mark, self._ob, self._oact,
            obj.lo, obj.hi, np.asarray(slots, dtype=np.int64), cap, depth, dup)

    def _update(self, slots) -> None:
        self._order = None
        if not self._inside_root(slots):
            self._grow_and_rebuild()
            return
        cap, depth, dup = self._sizes()
        obj = self.objects
        a0, a1, _ = self._axes
        self._nf, self._ni, self._ri = qk.update(
            self._nf, self._ni, self._ri, self._meta, self._mark, self._ob, self._oact,
            obj.lo, obj.hi, np.asarray(slots, dtype=np.int64), a0, a1, cap, depth, dup)

    def _set_awake(self, slots) -> None:
        obj = self.objects
        flags = obj.dynamic[slots] & obj.awake[slots]
        qk.set_active(self._nf, self._ni, self._ob, self._oact, obj.lo, obj.hi,
                      np.asarray(slots, dtype=np.int64), flags)

    # ---------------------------------------------------------------- queries
    def _tree(self) -> qk.QuadArrays:
        """The pools and the object table as the one structure the query kernels take."""
        a0, a1, a2 = self._axes
        obj = self.objects
        return qk.QuadArrays(self._nf, self._ni, self._ri, self._meta, self._mark, self._oact,
                             obj.lo, obj.hi, obj.ids, int(a0), int(a1), int(a2))

    def _query(self, shape, trace):
        slots, ts, visited, tested, rows, culled = qk.query(
            self._tree(), shape.kind, shape.params, shape.planes, bool(trace))
        if trace:
            row_of = self._rows()[1]
            rows, culled = row_of[rows], row_of[culled]
        else:
            rows = culled = None
        return slots, ts, visited, tested, rows, culled

    def _query_box(self, lo, hi, trace):
        slots, _, visited, tested, rows, _ = self._query(K.box_shape(lo, hi), trace)
        return C.SlotHits(slots, visited, tested, rows)

    def _query_sphere(self, center, radius, trace):
        slots, _, visited, tested, rows, _ = self._query(K.sphere_shape(center, radius), trace)
        return C.SlotHits(slots, visited, tested, rows)

    def _query_ray(self, origin, direction, max_t, trace):
        slots, t, visited, tested, rows, _ = self._query(
            K.ray_shape(origin, direction, max_t), trace)
        return C.RayHits(slots, t, visited, tested, rows)

    def _query_frustum(self, planes, trace):
        planes = np.ascontiguousarray(planes, dtype=np.float64)
        slots, _, visited, tested, rows, culled = self._query(K.frustum_shape(planes), trace)
        if len(slots):
            slots = slots[frustum_box(planes, self.objects.lo[slots], self.objects.hi[slots])]
        return C.FrustumHits(slots, visited, tested, rows, culled)

    def _query_boxes(self, lo, hi) -> C.BatchResult:
        slots, offsets, visited, tested = qk.query_boxes(self._tree(), lo, hi)
        return C.BatchResult(self._ids(slots), offsets, visited, tested)

    def _query_rays(self, origins, directions, max_t) -> C.RayBatchResult:
        obj = self.objects
        slots, t, visited, tested = qk.query_rays(self._tree(), origins, directions,
                                                  float(max_t))
        ids = np.full(len(slots), -1, dtype=np.int64)
        ids[slots >= 0] = obj.ids[slots[slots >= 0]]
        return C.RayBatchResult(ids, t, visited, tested)

    def _pairs(self, mode):
        node_tests = np.zeros(len(self._ni), dtype=np.int64)
        pairs, tests = qk.pairs(self._tree(), mode == "active", node_tests)
        order = self._rows()[0]
        return C.PairHits(pairs, tests, node_tests[order])

    # ---------------------------------------------------------------- inspection
    def _rows(self):
        """``(order, row_of)``: internal node of each :meth:`nodes` row, and the inverse."""
        if self._order is None:
            self._order = qk.bfs_order(self._ni, self._meta)
        return self._order

    def _nodes(self) -> NodeTable:
        order = self._rows()[0]
        ni, nf = self._ni[order], self._nf[order]
        a0, a1, a2 = self._axes
        slots = self.objects.alive_slots()
        if len(slots):  # the ignored axis spans every object, so the overlay can draw the boxes
            third_lo = float(self.objects.lo[slots, a2].min())
            third_hi = float(self.objects.hi[slots, a2].max())
        else:
            third_lo = third_hi = 0.0
        n = len(order)
        lo = np.empty((n, 3))
        hi = np.empty((n, 3))
        lo[:, a0], lo[:, a1], lo[:, a2] = nf[:, qk.SQ_LO0], nf[:, qk.SQ_LO1], third_lo
        hi[:, a0], hi[:, a1], hi[:, a2] = nf[:, qk.SQ_HI0], nf[:, qk.SQ_HI1], third_hi
        row_of = self._rows()[1]
        parent = np.where(ni[:, qk.PARENT] >= 0, row_of[np.maximum(ni[:, qk.PARENT], 0)], -1)
        return NodeTable.from_columns(
            lo=lo, hi=hi, depth=ni[:, qk.DEPTH], parent=parent, is_leaf=ni[:, qk.CHILD] < 0,
            own_count=ni[:, qk.COUNT], subtree_count=ni[:, qk.REFS],
            awake=ni[:, qk.ACTIVE] > 0)

    def _node_objects(self, row):
        order = self._rows()[0]
        if not 0 <= row < len(order):
            raise IndexError(f"node row {row} does not exist (the tree has {len(order)} nodes)")
        return qk.bucket_slots(self._ni, self._ri, int(order[row]))

    def _leaf_capacity(self) -> float:
        return float(self.params.max_objects)

    def _memory_bytes(self) -> int:
        live = int(self._meta[qk.M_LIVE])
        refs = int(self._meta[qk.M_REF_TOP])
        per_node = self._nf.itemsize * qk.NF_COLS + self._ni.itemsize * qk.NI_COLS
        return live * per_node + refs * 2 * 8 + self._ob.nbytes + self._oact.nbytes + self._mark.nbytes

    def _extra_stats(self) -> dict:
        refs = int(self._ni[0, qk.REFS])
        order = self._rows()[0]
        leaves = order[self._ni[order, qk.CHILD] < 0]
        over = int((self._ni[leaves, qk.COUNT] > self.params.max_objects).sum())
        return {"plane": self.params.plane, "duplicates": refs - self.objects.count,
                "over_capacity_leaves": over}

    def _validate(self) -> None:
        obj = self.objects
        self._fit_slot_arrays()
        a0, a1, _ = self._axes
        cap, depth, dup = self._sizes()
        limit = obj.slot_limit
        code, a, b, c = qk.validate(
            self._nf, self._ni, self._ri, self._meta, self._mark, self._ob, self._oact,
            obj.lo, obj.hi, obj.alive[:limit], obj.dynamic, obj.awake, a0, a1, cap, depth, dup)
        if code:
            kinds, message = _INVARIANTS[code]
            row_of = qk.bfs_order(self._ni, self._meta)[1]
            values = []
            for kind, value in zip(kinds.ljust(3, "v"), (a, b, c)):
                if kind == "n" and 0 <= value < len(row_of) and row_of[value] >= 0:
                    value = f"row {row_of[value]}"
                elif kind == "n":
                    value = f"#{value} (unreachable)"
                elif kind == "s":
                    value = int(obj.ids[value])
                values.append(value)
            raise IndexInvariantError(f"quadtree: {message.format(*values)}")


def register(registry) -> None:
    """Built-in plugin entry point."""
    registry.add_backend(Quadtree)
